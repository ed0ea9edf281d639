#!/usr/bin/env bash
# Runs a throwaway single-node Ceph RGW (S3) on loopback, all state under one directory.
#
#   scripts/ceph-rgw.sh start <state-dir>   start mon + osd (memstore, data in RAM) + radosgw and
#                                           create one S3 user; prints on stdout exactly:
#                                             endpoint=http://127.0.0.1:<port>
#                                             access_key=<key>
#                                             secret_key=<secret>
#                                             region=us-east-1
#                                             uid=<rgw user id>
#                                             conf=<state-dir>/ceph.conf
#   scripts/ceph-rgw.sh stop <state-dir>    SIGKILL the daemons named by the pid files; removes nothing
#   scripts/ceph-rgw.sh usage <state-dir>   radosgw-admin usage show JSON for that user
#
# Progress and errors go to stderr; daemon logs stay in <state-dir>/log. Missing Ceph binaries are
# installed from Debian's packages when running as root. The usage log is enabled and flushed on
# every request, so per-category op counts and bytes can be read with `usage` once a request returns.
# Environment: CEPH_RGW_TIMEOUT (seconds to wait for each daemon, default 120).
set -euo pipefail

TIMEOUT="${CEPH_RGW_TIMEOUT:-120}"
RGW_NAME="client.rgw.a"
PACKAGES="ceph-mon ceph-osd radosgw ceph-common"

log() { echo "ceph-rgw: $*" >&2; }
die() { echo "ceph-rgw: error: $*" >&2; exit 1; }

usage_line() {
  echo "usage: $0 start|stop|usage <state-dir>" >&2
  exit 2
}

[ $# -eq 2 ] || usage_line
cmd="$1"
[ -n "$2" ] || usage_line
if [ "$cmd" = start ]; then mkdir -p "$2"; fi
[ -d "$2" ] || { echo "ceph-rgw: error: no such state directory: $2" >&2; exit 1; }
STATE="$(cd "$2" && pwd -P)"
CONF="$STATE/ceph.conf"
RUN="$STATE/run"
LOGDIR="$STATE/log"
INFO="$STATE/rgw-user.env"

# --- helpers -------------------------------------------------------------------------------

ensure_binaries() {
  local missing=() b
  for b in ceph-mon ceph-osd radosgw radosgw-admin ceph ceph-authtool monmaptool; do
    command -v "$b" >/dev/null 2>&1 || missing+=("$b")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    die "missing ${missing[*]}; install the Debian packages: apt-get install -y --no-install-recommends $PACKAGES"
  fi
  log "installing $PACKAGES (missing: ${missing[*]})"
  # shellcheck disable=SC2086
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $PACKAGES; } >&2 \
    || die "apt-get install of $PACKAGES failed"
  for b in ceph-mon ceph-osd radosgw radosgw-admin ceph ceph-authtool monmaptool; do
    command -v "$b" >/dev/null 2>&1 || die "$b still missing after installing $PACKAGES"
  done
}

# Prints one free TCP port on 127.0.0.1 (not in the list given as arguments).
free_port() {
  local p
  if command -v python3 >/dev/null 2>&1; then
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      p=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
      case " $* " in *" $p "*) continue ;; esac
      echo "$p"; return 0
    done
  fi
  # Fallback: probe random high ports until one refuses connections.
  for _ in $(seq 1 200); do
    p=$(( 20000 + RANDOM % 40000 ))
    case " $* " in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"; return 0
    fi
  done
  die "could not find a free port on 127.0.0.1"
}

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

read_pid() { if [ -s "$RUN/$1.pid" ]; then tr -dc '0-9' < "$RUN/$1.pid"; fi; }

ceph_cli() { timeout 20 ceph -c "$CONF" --connect-timeout 10 "$@"; }

# Starts a daemon in the foreground (-f) in its own session, detached from our stdio, and
# records its pid at once (the daemon writes the same pid to the same file later, radosgw late).
spawn() {
  local name="$1"; shift
  setsid "$@" -f </dev/null >>"$LOGDIR/$name.out" 2>&1 &
  echo $! > "$RUN/$name.pid"
  disown $!  # no job-status noise when the daemon is later killed
}

# wait_for <daemon name> <log file> <description> <command...>: polls the command until it
# succeeds; fails if the daemon dies or TIMEOUT passes.
wait_for() {
  local name="$1" logfile="$2" what="$3"; shift 3
  local deadline=$(( $(date +%s) + TIMEOUT )) pid
  pid=$(read_pid "$name")
  # (The subshell keeps the redirection off the EXIT trap if a signal arrives while polling.)
  until ("$@") >/dev/null 2>&1; do
    if ! pid_alive "$pid"; then
      die "$name exited before $what; see $logfile (and $LOGDIR/$name.out)"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      die "$name: $what did not happen within ${TIMEOUT}s; see $logfile (and $LOGDIR/$name.out)"
    fi
    sleep 0.2
  done
}

stop_daemons() {
  local f pid
  [ -d "$RUN" ] || return 0
  for f in "$RUN"/*.pid; do
    [ -e "$f" ] || continue
    pid=$(tr -dc '0-9' < "$f")
    if pid_alive "$pid" && grep -qaE 'ceph-mon|ceph-osd|radosgw' "/proc/$pid/cmdline" 2>/dev/null \
        && grep -qaF "$CONF" "/proc/$pid/cmdline" 2>/dev/null; then
      kill -9 "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do pid_alive "$pid" || break; sleep 0.1; done
    fi
  done
}

mon_up() { ceph_cli mon stat; }
osd_up() { ceph_cli osd dump | grep -qE '^osd\.0 up +in '; }
rgw_up() { curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$RGW_PORT/"; }

write_conf() {
  cat > "$CONF" <<EOF
[global]
fsid = $FSID
mon_host = [v2:127.0.0.1:$MON_PORT]
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_msgr1 = false
ms_bind_msgr2 = true
ms_bind_ipv6 = false
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
keyring = $STATE/keyring
run_dir = $RUN
pid_file = $RUN/\$name.pid
admin_socket = $RUN/\$name.asok
log_file = $LOGDIR/\$name.log
mon_cluster_log_file = $LOGDIR/\$cluster.log
crash_dir = $STATE/crash
log_to_stderr = false
err_to_stderr = false
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
osd_crush_chooseleaf_type = 0
mon_max_pg_per_osd = 1000
mon_osd_full_ratio = .99
mon_osd_backfillfull_ratio = .985
mon_osd_nearfull_ratio = .98
osd_failsafe_full_ratio = .995
mon_data_avail_crit = 1
mon_data_avail_warn = 2
paxos_propose_interval = 0.05

[mon]
mon_data = $STATE/mon/\$cluster-\$id

[osd]
osd_data = $STATE/osd/\$cluster-\$id
osd_objectstore = memstore
memstore_device_bytes = 8589934592

[client]
auth_client_required = none
ms_mon_client_mode = crc secure

[$RGW_NAME]
auth_client_required = none
ms_mon_client_mode = crc secure
rgw_data = $STATE/rgw
rgw_frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw_enable_usage_log = true
rgw_usage_log_tick_interval = 1
# RGW flushes when the number of pending (user, bucket, hour) batches exceeds the threshold, so
# 1 waits for a second bucket or the 1 s tick; 0 writes each request's usage before it returns.
rgw_usage_log_flush_threshold = 0
rgw_gc_obj_min_wait = 30
rgw_gc_processor_period = 30
rgw_dynamic_resharding = false
EOF
}

# --- commands ------------------------------------------------------------------------------

do_start() {
  ensure_binaries
  command -v curl >/dev/null 2>&1 || die "curl is required (apt-get install -y curl)"
  local p
  for p in mon.a osd.0 "$RGW_NAME"; do
    if pid_alive "$(read_pid "$p")"; then
      die "a cluster is already running in $STATE ($p pid $(read_pid "$p")); run '$0 stop $STATE' first"
    fi
  done
  # Fresh cluster every start (memstore keeps no data across restarts anyway).
  rm -rf "$STATE/mon" "$STATE/osd" "$STATE/rgw" "$STATE/crash" "$RUN" "$STATE/keyring" \
         "$STATE/monmap" "$CONF" "$INFO"
  mkdir -p "$STATE/mon/ceph-a" "$STATE/osd/ceph-0" "$STATE/rgw" "$STATE/crash" "$RUN" "$LOGDIR"

  local started; started=$(date +%s)
  FSID=$(cat /proc/sys/kernel/random/uuid)
  MON_PORT=$(free_port)
  RGW_PORT=$(free_port "$MON_PORT")
  write_conf

  # If anything below fails, do not leave half a cluster running.
  on_exit() {
    local rc=$?
    if [ "$rc" -ne 0 ]; then
      log "start failed; stopping daemons (logs kept in $LOGDIR)"
      stop_daemons
    fi
  }
  trap on_exit EXIT
  trap 'exit 1' INT TERM

  log "monitor on 127.0.0.1:$MON_PORT"
  ceph-authtool --create-keyring "$STATE/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool "$STATE/keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
  monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$STATE/monmap" >/dev/null
  ceph-mon -c "$CONF" -i a --mkfs --monmap "$STATE/monmap" --keyring "$STATE/keyring" \
    >>"$LOGDIR/mon.a.out" 2>&1 || die "ceph-mon --mkfs failed; see $LOGDIR/mon.a.out"
  spawn mon.a ceph-mon -c "$CONF" -i a
  wait_for mon.a "$LOGDIR/mon.a.log" "the monitor answering" mon_up

  log "osd.0 (memstore)"
  local osd_uuid osd_id
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  osd_id=$(ceph_cli osd new "$osd_uuid") || die "'ceph osd new' failed"
  [ "$osd_id" = 0 ] || die "expected osd id 0, got '$osd_id'"
  ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" >>"$LOGDIR/osd.0.out" 2>&1 \
    || die "ceph-osd --mkfs failed; see $LOGDIR/osd.0.log"
  spawn osd.0 ceph-osd -c "$CONF" -i 0
  wait_for osd.0 "$LOGDIR/osd.0.log" "osd.0 up and in" osd_up

  log "radosgw on 127.0.0.1:$RGW_PORT"
  spawn "$RGW_NAME" radosgw -c "$CONF" -n "$RGW_NAME"
  wait_for "$RGW_NAME" "$LOGDIR/$RGW_NAME.log" "the S3 endpoint answering HTTP" rgw_up

  local uid="writeonce" access secret
  access=$(LC_ALL=C tr -dc 'A-Z0-9' < /dev/urandom | head -c 20 || true)
  secret=$(LC_ALL=C tr -dc 'A-Za-z0-9' < /dev/urandom | head -c 40 || true)
  timeout 60 radosgw-admin -c "$CONF" user create --uid="$uid" --display-name="writeonce tests" \
    --access-key="$access" --secret-key="$secret" >>"$LOGDIR/radosgw-admin.out" 2>&1 \
    || die "radosgw-admin user create failed; see $LOGDIR/radosgw-admin.out"
  {
    echo "endpoint=http://127.0.0.1:$RGW_PORT"
    echo "access_key=$access"
    echo "secret_key=$secret"
    echo "region=us-east-1"
    echo "uid=$uid"
    echo "conf=$CONF"
  } > "$INFO"
  trap - EXIT INT TERM
  log "up in $(( $(date +%s) - started ))s; stop with: $0 stop $STATE"
  cat "$INFO"
}

do_stop() {
  stop_daemons
  log "stopped daemons of $STATE"
}

do_usage() {
  [ -s "$INFO" ] || die "no cluster info in $STATE (was '$0 start $STATE' run?)"
  local uid
  uid=$(sed -n 's/^uid=//p' "$INFO")
  timeout 60 radosgw-admin -c "$CONF" usage show --uid="$uid" --show-log-entries=false 2>>"$LOGDIR/radosgw-admin.out"
}

case "$cmd" in
  start) do_start ;;
  stop) do_stop ;;
  usage) do_usage ;;
  *) usage_line ;;
esac
