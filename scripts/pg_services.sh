#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback, for the shared request cache and MLflow tracking store
# (docs/scale-out.md) and their tests. Debian's `postgresql` package; the cluster runs as the
# `postgres` user in a folder of its own, so nothing of the system's clusters is touched.
#
#   scripts/pg_services.sh install                  apt-get -o DPkg::Lock::Timeout=600 install postgresql (root; does nothing when present)
#   scripts/pg_services.sh start DIR PORT DB USER   initdb DIR (once), start (unless running) on 127.0.0.1:PORT, create DB owned by USER
#   scripts/pg_services.sh stop DIR                 stop the cluster in DIR
#
# start reads the user's password from PGSERVICE_PASSWORD (environment, never an argument: arguments
# show in `ps`) and prints nothing of it. The URL to use is then
#   postgresql://USER:$PGSERVICE_PASSWORD@127.0.0.1:PORT/DB
set -euo pipefail

pg_bin() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [[ -n "$d" ]] || { echo "pg_services: no /usr/lib/postgresql/*/bin (run: $0 install)" >&2; exit 2; }
    echo "$d"
}

as_postgres() {
    if [[ $(id -un) == postgres ]]; then "$@"; else runuser -u postgres -- "$@"; fi
}

cmd=${1:-}
case "$cmd" in
install)
    if ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then exit 0; fi
    [[ $(id -u) == 0 ]] || { echo "pg_services: installing postgresql needs root" >&2; exit 2; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends postgresql >/dev/null
    ;;
start)
    dir=${2:?DIR} port=${3:?PORT} db=${4:?DB} user=${5:?USER}
    pw=${PGSERVICE_PASSWORD:?set PGSERVICE_PASSWORD}
    bin=$(pg_bin)
    mkdir -p "$dir"
    if [[ $(id -u) == 0 ]]; then chown postgres: "$dir"; fi
    chmod 700 "$dir"
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
        as_postgres "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >/dev/null
        # Loopback only; the socket lives in DIR (the system's /var/run/postgresql may not exist).
        printf "listen_addresses = '127.0.0.1'\nport = %s\nunix_socket_directories = '%s'\nmax_connections = 200\n" \
            "$port" "$dir" >>"$dir/data/postgresql.conf"
        # Over TCP a password is needed; the socket in DIR (mode 700) trusts the postgres user.
        printf "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n" >"$dir/data/pg_hba.conf"
    fi
    if ! as_postgres "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >/dev/null
    fi
    # The password goes in on stdin (psql variables), never on a command line.
    as_postgres "$bin/psql" -X -q -h "$dir" -p "$port" -U postgres -d postgres \
        -v ON_ERROR_STOP=1 -v user="$user" -v db="$db" -v pw="$pw" >/dev/null <<'SQL'
SELECT format('CREATE ROLE %I LOGIN', :'user') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'user')\gexec
SELECT format('ALTER ROLE %I PASSWORD %L', :'user', :'pw')\gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'user') WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db')\gexec
SQL
    ;;
stop)
    dir=${2:?DIR}
    bin=$(pg_bin)
    if [[ -f "$dir/data/postmaster.pid" ]]; then
        as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    fi
    ;;
*)
    echo "usage: $0 install | start DIR PORT DB USER | stop DIR" >&2
    exit 2
    ;;
esac
