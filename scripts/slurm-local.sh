#!/bin/sh
# A one-node Slurm cluster on loopback, all of it under one directory: for the Slurm
# end-to-end test (tests/unit/bot/service/slurm_test.cc) and for trying `maxcode serve`
# with `slurm` in its config on one machine (docs/service.md "Running on Slurm").
#
#   scripts/slurm-local.sh start DIR [GPUS]   munged, slurmctld and slurmd in the background
#   scripts/slurm-local.sh stop DIR           stops the three (by the pids they wrote)
#
# After `start`, commands find the cluster with SLURM_CONF=DIR/slurm.conf. Nothing of
# /etc is used: its own munge key and socket (AuthInfo names the socket, so the
# machine's munged, if any, is left alone), its own state and spool directories, ports
# that were free. No cgroups (ProctrackType=proctrack/linuxproc, TaskPlugin=task/none):
# it runs in containers without systemd. The node advertises GPUS (default 1, at least
# 1) `gpu` generic resources, standing in for real ones, so that jobs submitted with
# --gres=gpu:N are scheduled as on a GPU cluster.
set -eu
# The daemons are in /usr/sbin, which a user's PATH may lack.
PATH=$PATH:/usr/sbin:/sbin

usage() {
  echo "usage: $0 start DIR [GPUS] | stop DIR" >&2
  exit 2
}
[ $# -ge 2 ] || usage
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
gpus=${3:-1}

# A TCP port nothing listens on now (the kernel's pick).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop_pid_file() {
  [ -f "$1" ] || return 0
  pid=$(cat "$1")
  kill "$pid" 2>/dev/null || true
  # Up to 10 s for a clean exit (slurmctld saves its state), then SIGKILL.
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$1"
}

case "$action" in
  stop)
    # Jobs first: a slurmstepd whose slurmd is gone would wait for it forever (a test
    # that failed mid-job leaves one running).
    if [ -f "$dir/slurmctld.pid" ] && command -v scancel >/dev/null; then
      SLURM_CONF="$dir/slurm.conf" scancel --user="$(id -un)" 2>/dev/null || true
      for _ in $(seq 50); do
        [ -z "$(SLURM_CONF="$dir/slurm.conf" squeue -h 2>/dev/null)" ] && break
        sleep 0.2
      done
    fi
    stop_pid_file "$dir/slurmd.pid"
    stop_pid_file "$dir/slurmctld.pid"
    stop_pid_file "$dir/munged.pid"
    exit 0
    ;;
  start) ;;
  *) usage ;;
esac

for tool in munged slurmctld slurmd sinfo; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is missing (scripts/setup.sh installs Debian's slurm-wlm and munge)" >&2; exit 3; }
done

# munged refuses a key or a socket directory that others could write or read.
chmod 700 "$dir"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$dir/munge/munge.key"
munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" --force

user=$(id -un)
cpus=$(nproc)
cat >"$dir/slurm.conf" <<EOF
ClusterName=maxcode-local
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
GresTypes=gpu
# Ended jobs stay visible to squeue --states=all this long (the test counts submissions).
MinJobAge=600
NodeName=maxcode-node NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=$cpus Gres=gpu:$gpus State=UNKNOWN
PartitionName=local Nodes=maxcode-node Default=YES MaxTime=INFINITE State=UP
EOF
# slurmd drops a GPU without a device file and refuses a regular file: links to the
# character device /dev/null stand in for /dev/nvidia*. Nothing opens them (no cgroup
# device rules); jobs see CUDA_VISIBLE_DEVICES as on a GPU node.
mkdir -p "$dir/dev"
i=0
while [ "$i" -lt "$gpus" ]; do
  ln -sfn /dev/null "$dir/dev/gpu$i"
  i=$((i + 1))
done
cat >"$dir/gres.conf" <<EOF
NodeName=maxcode-node Name=gpu File=$dir/dev/gpu[0-$((gpus - 1))]
EOF

export SLURM_CONF="$dir/slurm.conf"
# -i: a fresh state (no jobs of an earlier run); both fork once they are up.
slurmctld -i -f "$dir/slurm.conf"
slurmd -f "$dir/slurm.conf" -N maxcode-node

# Ready when the node is idle (slurmd registered with slurmctld).
for _ in $(seq 150); do
  if [ "$(sinfo -h -n maxcode-node -o %t 2>/dev/null)" = "idle" ]; then
    echo "SLURM_CONF=$dir/slurm.conf"
    exit 0
  fi
  sleep 0.2
done
echo "$0: the node did not become idle within 30 s; logs in $dir/log:" >&2
tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
exit 1
