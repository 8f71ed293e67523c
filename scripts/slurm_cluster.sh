#!/usr/bin/env bash
# A one-node Slurm cluster on this machine (slurmctld and slurmd on localhost), for testing the
# Slurm profile (profiles/slurm; tests/test_slurm.py, docs/scale-out.md). Root only; Debian/Ubuntu.
#
#   scripts/slurm_cluster.sh start    install slurm-wlm and munge (apt-get, once), write the config,
#                                     start munged, slurmctld and slurmd, wait until the node is idle
#   scripts/slurm_cluster.sh stop     stop the three daemons this script started and remove the
#                                     slurm.conf it wrote (see stop())
#   scripts/slurm_cluster.sh status   sinfo
#
# Exit status 3: slurm-wlm and munge are not installed and apt-get cannot install them.
#
# Deliberately minimal: no cgroups (proctrack/linuxproc, task/none), no slurmdbd (it needs a MySQL
# server), so `sacct` has no accounting database; finished jobs are written by jobcomp/filetxt to
# $SLURM_TEST_DIR/jobcomp.log (one line per job: JobId, Name, JobState, ...), which the test reads.
# The node advertises SLURM_TEST_CPUS CPUs (default 8) and SLURM_TEST_MEM_MB memory (default 64000)
# whatever the machine has (SlurmdParameters=config_overrides), so jobs asking params' default
# `resources` run on a small machine too: nothing is enforced without cgroups anyway.
set -euo pipefail

DIR=${SLURM_TEST_DIR:-/var/lib/socialbench-slurm}
CONF_DIR=/etc/slurm
NODE=$(hostname -s)
CPUS=${SLURM_TEST_CPUS:-8}
MEM_MB=${SLURM_TEST_MEM_MB:-64000}

die() { echo "slurm_cluster: $*" >&2; exit 1; }

install_packages() {
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null && return
    command -v apt-get >/dev/null || { echo "slurm_cluster: apt-get not found (Debian/Ubuntu only)" >&2; exit 3; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends slurm-wlm munge >/dev/null \
        || { apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends slurm-wlm munge >/dev/null; } \
        || { echo "slurm_cluster: apt-get could not install slurm-wlm and munge (no package mirror?)" >&2; exit 3; }
}

HEADER="# Written by socialbench scripts/slurm_cluster.sh"

write_config() {
    # never overwrite a real cluster's configuration
    if [ -f "$CONF_DIR/slurm.conf" ] && ! head -1 "$CONF_DIR/slurm.conf" | grep -qF "$HEADER"; then
        die "$CONF_DIR/slurm.conf exists and is not ours: this machine has its own Slurm set-up"
    fi
    mkdir -p "$CONF_DIR" "$DIR/ctld" "$DIR/d" "$DIR/log"
    cat >"$CONF_DIR/slurm.conf" <<EOF
$HEADER: one node on localhost, for tests.
ClusterName=socialbench
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/d
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/jobcomp.log
MinJobAge=3600
ReturnToService=2
SlurmdParameters=config_overrides
MpiDefault=none
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
}

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
    [ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts daemons)"
    install_packages
    write_config
    mkdir -p /run/munge && chown munge:munge /run/munge
    # munged and slurmctld at the default priority even when the caller runs niced (the tests under
    # `nice -n 19`): on a busy machine a niced slurmctld answered `scontrol show config` after the
    # Slurm executor plugin's 10-s limit, the plugin then asked sacct (no accounting here) for job
    # states, lost the jobs it got no state for, and Snakemake waited for them for good. slurmd, which
    # runs the jobs, keeps the caller's priority.
    local renice=(nice -n "$((-$(nice)))")
    if ! running /run/munge/munged.pid; then
        "${renice[@]}" runuser -u munge -- /usr/sbin/munged
    fi
    running "$DIR/slurmctld.pid" || "${renice[@]}" slurmctld
    running "$DIR/slurmd.pid" || slurmd
    for _ in $(seq 60); do
        state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
        case "$state" in idle | mix | alloc) echo "slurm_cluster: node $NODE is $state"; return 0 ;; esac
        if [ "$state" = down ] || [ "$state" = drain ]; then
            scontrol update NodeName="$NODE" State=RESUME 2>/dev/null || true
        fi
        sleep 1
    done
    die "node $NODE not idle after 60 s (state: ${state:-none}); logs in $DIR/log"
}

stop() {
    for pidfile in "$DIR/slurmd.pid" "$DIR/slurmctld.pid" /run/munge/munged.pid; do
        if running "$pidfile"; then
            kill "$(cat "$pidfile")"
        fi
    done
    # Our slurm.conf goes too: with it and no slurmctld answering, every `scontrol` waits out its 10-s
    # timeout, and the Slurm executor plugin runs `scontrol show config` at each Snakemake start
    # (docs/scale-out.md). Without it, scontrol fails at once and Snakemake starts as fast as before.
    if [ -f "$CONF_DIR/slurm.conf" ] && head -1 "$CONF_DIR/slurm.conf" | grep -qF "$HEADER"; then
        rm -f "$CONF_DIR/slurm.conf"
    fi
    echo "slurm_cluster: stopped"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) sinfo ;;
    *) die "usage: $0 start|stop|status" ;;
esac
