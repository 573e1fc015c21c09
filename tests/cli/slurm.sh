#!/bin/sh
# docs/scale-out.md's Slurm job-array recipe, run as written (the script after its
# "recipe: slurm job.sh" marker) on a one-node Slurm cluster this test
# starts itself: munged with a key made here, slurmctld and slurmd on
# localhost, everything (config, state, spool, logs, sockets) in the test's
# temporary directory, the daemons started directly (no systemd) and
# stopped at the end.  Checks: the array's outputs are complete and equal
# one run's; after one array task is killed midway (scancel), running the
# array again redoes only what is missing (--skip-existing).
# Needs root (slurmd runs jobs as their user) and Debian's slurm-wlm and
# munge (make deps installs them); else "skip" with the reason.
. "$(dirname "$0")/lib.sh"

need=
for p in munged munge slurmctld slurmd sbatch squeue scancel sinfo; do
    command -v "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
    skip "Slurm recipe: not installed:$need (Debian packages slurm-wlm munge; make deps)"
    finish
fi
if ! is_root; then
    skip "Slurm recipe: needs root (slurmd runs the jobs as their user)"
    finish
fi
if ! command -v ffmpeg >/dev/null 2>&1; then
    skip "Slurm recipe: ffmpeg not installed"
    finish
fi

S=$T/slurm
mkdir -m 700 "$S" "$S/munge" "$S/state" "$S/spool" || exit 1
chmod 711 "$T" "$S" "$S/munge" # munged: the socket's directories searchable
MUNGE_PID= CTLD_PID= SLURMD_PID=

stop_daemons() {
    for p in $SLURMD_PID $CTLD_PID $MUNGE_PID; do
        our_child_alive "$p" && kill -TERM "$p" 2>/dev/null
    done
    for p in $SLURMD_PID $CTLD_PID $MUNGE_PID; do
        i=0
        while our_child_alive "$p" && [ $i -lt 100 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        our_child_alive "$p" && kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    SLURMD_PID= CTLD_PID= MUNGE_PID=
}
trap 'stop_daemons; cleanup' EXIT

# ---- munge: a key of our own, a socket of our own
dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$S/munge/munge.key"
munged -F --force --key-file="$S/munge/munge.key" --socket="$S/munge/sock" \
    --pid-file="$S/munge/pid" --log-file="$S/munge/log" --seed-file="$S/munge/seed" \
    >"$S/munged.out" 2>&1 &
MUNGE_PID=$!
i=0
until munge -S "$S/munge/sock" -n 2>/dev/null | unmunge -S "$S/munge/sock" >/dev/null 2>&1; do
    i=$((i + 1))
    if [ $i -ge 50 ] || ! our_child_alive "$MUNGE_PID"; then
        skip "Slurm recipe: munged does not start here: $(tail -n 1 "$S/munged.out" 2>/dev/null)"
        finish
    fi
    sleep 0.1
done

# ---- slurm.conf: one node, this host; ports of our own (runs at once on
# one machine must not meet)
NODE=$(hostname -s)
PORT=$((20000 + ($$ % 10000) * 2))
cat >"$S/slurm.conf" <<EOF
ClusterName=gpuedge-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
AuthInfo=socket=$S/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
KillWait=5
SlurmdParameters=config_overrides
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
SLURM_CONF=$S/slurm.conf
export SLURM_CONF
slurmctld -D -f "$SLURM_CONF" >"$S/slurmctld.out" 2>&1 &
CTLD_PID=$!
slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$S/slurmd.out" 2>&1 &
SLURMD_PID=$!
i=0
until sinfo -h -o '%t' 2>/dev/null | grep -qx 'idle'; do
    i=$((i + 1))
    if [ $i -ge 150 ] || ! our_child_alive "$CTLD_PID" || ! our_child_alive "$SLURMD_PID"; then
        why=$(cat "$S/slurmctld.log" "$S/slurmd.log" 2>/dev/null | grep -i -m 1 'error\|fatal')
        skip "Slurm recipe: slurmctld/slurmd do not start here: ${why:-no idle node after 15 s}"
        finish
    fi
    sleep 0.1
done
ok "one-node Slurm cluster up (munged, slurmctld, slurmd on $NODE, port $PORT)"

# ---- the recipe, as docs/scale-out.md has it
awk '/<!-- recipe: slurm job.sh/ { on = 1; next } on && /^    / { sub(/^    /, ""); print; next }
     on { exit }' "$ROOT/docs/scale-out.md" >job.sh
if ! grep -q '^#SBATCH --array' job.sh || ! grep -q 'gpuedge' job.sh; then
    not_ok "no Slurm job-array recipe found in docs/scale-out.md"
    finish
fi
mkdir bin
ln -s "$GPUEDGE" bin/gpuedge
PATH=$W/bin:$PATH # (sbatch passes the environment on)
export PATH

# the batch: 3 tasks; task 2 (lines 2, 5, 8, ...) starts with the long video
mkdir in
for i in 0 1 2 3 4 5 6 7 8; do
    cp "$SAMPLES/photo.png" "in/p$i.png"
done
ffmpeg -nostdin -v error -y -f lavfi -i "testsrc=size=400x300:rate=25" -frames:v 900 \
    -pix_fmt yuv420p in/long.mp4 </dev/null || not_ok "making in/long.mp4"
{ echo in/p0.png; echo in/long.mp4; ls in/p[1-8].png; } >list.txt
NIN=$(nlines list.txt)
"$GPUEDGE" -q -o ref --from-file list.txt || not_ok "the reference run"

# sbatch ARGS: submits; waits (60 s at most) until the job has left the queue
run_array() {
    JOB=$(sbatch --parsable "$@" 2>"$T/sbatch.err") || {
        echo "# sbatch: $(cat "$T/sbatch.err")"
        return 1
    }
    JOB=${JOB%%;*}
}
wait_job() {
    i=0
    while [ -n "$(squeue -h -j "$JOB" 2>/dev/null)" ]; do
        i=$((i + 1))
        [ $i -lt 600 ] || return 1
        sleep 0.1
    done
}

# ---- the whole array: complete, equal to one run
if run_array --array=1-3 job.sh && wait_job; then
    why=
    diff -r ref out >/dev/null 2>&1 || why="outputs differ from one run's: $(ls out 2>&1 | tr '\n' ' ')"
    no_stray_files "$W" || why="${why:+$why; }$WHY"
    logs=$(cat slurm-"$JOB"_*.out 2>/dev/null)
    [ "$(ls slurm-"$JOB"_*.out 2>/dev/null | wc -l)" -eq 3 ] || why="${why:+$why; }not 3 task logs"
    [ -z "$logs" ] || why="${why:+$why; }task output: $(echo $logs | head -c 200)"
    [ -z "$why" ] && ok "Slurm array of 3: $NIN outputs, equal to one run's" ||
        not_ok "Slurm array: $why"
else
    not_ok "Slurm array did not run or did not finish in 60 s (job '$JOB')"
fi

# ---- task 2 killed midway (its video's temp output open), then the array again
rm -rf out slurm-*.out
killed=
if run_array --array=1-3 job.sh; then
    i=0
    while [ $i -lt 600 ] && [ -z "$killed" ]; do
        if ls out/.long.mkv.*.tmp >/dev/null 2>&1; then
            scancel "${JOB}_2" && killed=1
        fi
        [ -n "$(squeue -h -j "$JOB" 2>/dev/null)" ] || break
        sleep 0.05
        i=$((i + 1))
    done
    wait_job || not_ok "the array with a cancelled task did not finish in 60 s"
fi
if [ -z "$killed" ]; then
    skip "Slurm, killed task: task 2 ended before it could be cancelled"
else
    why=
    [ ! -e out/long.mkv ] || why="out/long.mkv exists after the kill"
    no_stray_files "$W" || why="${why:+$why; }$WHY"
    [ -z "$why" ] && ok "Slurm: a task cancelled midway leaves no output and no temp file" ||
        not_ok "cancelled task: $why"
    find out -type f -printf '%i %T@ %s %p\n' | LC_ALL=C sort >before
    if run_array --array=1-3 job.sh && wait_job; then
        find out -type f -printf '%i %T@ %s %p\n' | LC_ALL=C sort >after
        why=
        diff -r ref out >/dev/null 2>&1 || why="outputs differ from one run's"
        [ -z "$(grep -vxF -f after before)" ] || why="${why:+$why; }outputs of the first run were rewritten"
        [ "$(nlines after)" -gt "$(nlines before)" ] || why="${why:+$why; }nothing was left to redo"
        no_stray_files "$W" || why="${why:+$why; }$WHY"
        [ -z "$why" ] && ok "Slurm: the array again redoes only what is missing (--skip-existing), all $NIN equal one run's" ||
            not_ok "rerun after the cancelled task: $why"
    else
        not_ok "the rerun array did not run or finish"
    fi
fi

stop_daemons
finish
