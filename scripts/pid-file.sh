# Sourced by scripts that start daemons from pid files of their own
# (ensure-docker.sh, remote-engine.sh); defines functions only.

# True when pid file $1 names a live process called $2. `kill -0` or
# /proc/PID alone is not enough: a killed daemon stays a zombie until its
# reaper collects it, and after a crash or a reboot its number may belong
# to another program.
pid_file_runs() {
    local pid
    [ -f "$1" ] || return 1
    pid=$(tr -dc 0-9 <"$1")
    [ -n "$pid" ] && process_live "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]
}

# True when process $1 exists and is not a zombie.
process_live() {
    local state
    state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}
