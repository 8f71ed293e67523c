#!/usr/bin/env bash
# A throwaway SSH server on loopback, for testing a DVC SSH remote (tests/test_dvc_remote.py) without
# touching the system's sshd: its own host key, config, client key and pid file in DIR.
#
#   scripts/sshd_loopback.sh start DIR   # install Debian's openssh-server if absent (root), start sshd on
#                                        # a free 127.0.0.1 port; prints PORT=<n>
#   scripts/sshd_loopback.sh stop DIR    # stop the sshd started in DIR
#
# DIR afterwards holds: port, client_key (+ .pub, authorized for the current user), known_hosts (the
# server's host key for [127.0.0.1]:<port>), ssh_config (for plain `ssh -F DIR/ssh_config loopback`),
# sshd_config, sshd.pid, sshd.log. Only /run/sshd (sshd's privilege-separation directory) is created
# outside DIR. Key login only; the server listens on 127.0.0.1 only.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[[ -n $cmd && -n $dir ]] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

install_sshd() {
  [[ -x /usr/sbin/sshd ]] && return 0
  [[ $(id -u) -eq 0 ]] || { echo "sshd_loopback: /usr/sbin/sshd absent and not root (apt-get needs root)" >&2; exit 3; }
  command -v apt-get >/dev/null || { echo "sshd_loopback: /usr/sbin/sshd absent and no apt-get" >&2; exit 3; }
  # The package's own sshd service is not started where no init system runs (containers); this script
  # never starts, enables or edits it.
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends openssh-server >/dev/null \
    || { apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
      --no-install-recommends openssh-server >/dev/null; }
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  install_sshd
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [[ -f $dir/sshd.pid ]] && kill -0 "$(cat "$dir/sshd.pid")" 2>/dev/null; then
    echo "PORT=$(cat "$dir/port")"
    return 0
  fi
  [[ -f $dir/host_key ]] || ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
  [[ -f $dir/client_key ]] || ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key"
  cp "$dir/client_key.pub" "$dir/authorized_keys"
  chmod 600 "$dir/authorized_keys"
  local port
  port=$(free_port)
  cat >"$dir/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
# DIR usually lies under /tmp, which StrictModes refuses as a path to the authorized keys.
StrictModes no
Subsystem sftp internal-sftp
EOF
  mkdir -p /run/sshd 2>/dev/null || true
  /usr/sbin/sshd -t -f "$dir/sshd_config"
  /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"
  echo "$port" >"$dir/port"
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$dir/host_key.pub")" >"$dir/known_hosts"
  cat >"$dir/ssh_config" <<EOF
Host loopback
  HostName 127.0.0.1
  Port $port
  User $(id -un)
  IdentityFile $dir/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  StrictHostKeyChecking yes
EOF
  # sshd daemonises before it listens: wait for the port (at most 10 s).
  for _ in $(seq 50); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2).close()" 2>/dev/null && {
      echo "PORT=$port"
      return 0
    }
    sleep 0.2
  done
  echo "sshd_loopback: sshd did not listen on 127.0.0.1:$port; see $dir/sshd.log" >&2
  exit 1
}

stop() {
  [[ -f $dir/sshd.pid ]] || return 0
  local pid
  pid=$(cat "$dir/sshd.pid")
  kill "$pid" 2>/dev/null || true
  rm -f "$dir/sshd.pid"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
