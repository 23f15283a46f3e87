#!/usr/bin/env bash
# `make kube-test`: packaging/kubernetes/sidecar/ (the Deployment and its ConfigMap) under
# `podman kube play`, with the image of `make image`:
#
#   1. the image is built from the .deb of `make deb` (`make image-build`, no network), and the
#      manifests are turned into what podman 4.3 can run, in one visible step
#      (transform_manifests below: every change is listed and explained there and in
#      packaging/kubernetes/README.md, "Tried under podman");
#   2. the pod runs: the daemon container as the manifest runs it (UID 60917, no capabilities,
#      read-only root, its directories inside emptyDir-like volumes that are root's and 0777,
#      private_volumes in the ConfigMap) and the application container, whose command is the
#      image's reader (`pinkeeper validate`, UID 10002, the pins volume read-only);
#   3. checks: the daemon publishes from the fixture pinning service on the host's loopback
#      (Tests/Fixtures/pinserver.py, CA made now); the startup probe's command passes; the
#      processes' users, capabilities and no-new-privileges; the emptyDir stays root's 0777 and
#      the directories the daemon made inside it are its own, 0755; the application reads the
#      pin (`trusted`) and cannot write the volume; no reload before any edit (podman closes the
#      ConfigMap files it wrote only after the containers started, which changes nothing); an
#      edit of the ConfigMap's store file in the ConfigMap volume is noticed by the running daemon
#      (its log says so) and the new pins reach the application without a restart; the same pod
#      without private_volumes is refused.
# Each check prints PASS or FAIL with a reason, then the totals and the time; exits 1 if any
# check failed.
#
# Environment: IMAGE (default localhost/pinkeeper:<version>), KEEP=1 keeps the pod and volumes.
# Files: .build/kube-test/ (logs/ kept). Everything it makes is named pinkeeper-kube-test*.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
top=$(pwd -P)
# shellcheck source=scripts/nspawn.sh
source scripts/nspawn.sh  # check_pass/check_fail, fixture_* (the fixture service on the host)

# shellcheck source=scripts/podman-image.sh
source scripts/podman-image.sh  # CONTAINERS_CONF, version, image
work=$top/.build/kube-test
logs=$work/logs
prefix=pinkeeper-kube-test     # the Deployment, so the pod is $prefix-pod-0
config_volume=$prefix-config   # the ConfigMap, and so the volume podman makes of it
pod=$prefix-pod-0
daemon=$pod-pinkeeper
app=$pod-app
refused=$prefix-refused        # the same pod without private_volumes
uid=60917
app_uid=10002

die() { echo "kube-test: $*" >&2; exit 2; }
step() { printf '\n== %s  (%d s)\n' "$*" "$((SECONDS - t_start))"; }
one_line() { tr '\n' ' ' | sed 's/  */ /g; s/ $//'; }

[[ $(id -u) -eq 0 ]] || die "must run as root (podman as root)"
command -v catatonit >/dev/null || die "catatonit is missing (podman's pod infra container): make container-deps"
t_start=$SECONDS

remove_ours() {
    local yaml name volumes
    # The volumes our containers use: a VOLUME of the image that a container does not mount is
    # an anonymous volume, which `kube down` removes, but not after a failed `kube play`.
    volumes=$(for name in $(podman ps -a --filter "name=^$prefix" --format '{{.Names}}'); do
        podman inspect --format '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}' "$name"
    done)
    for yaml in "$work/play.yaml" "$work/refused.yaml"; do
        [[ -f $yaml ]] && podman kube down "$yaml" >/dev/null 2>&1
    done
    # One by one: podman stops at the first name it does not know.
    for name in $(podman pod ls --filter "name=^$prefix" --format '{{.Name}}'); do podman pod rm -f "$name" >/dev/null 2>&1; done
    for name in "$config_volume" "$refused-config" $volumes; do podman volume rm -f "$name" >/dev/null 2>&1; done
    rm -rf "$work/emptydir"
}
cleanup() {
    trap '' INT TERM
    for c in "$daemon" "$app" "$refused-pod-0-pinkeeper"; do podman logs "$c" >"$logs/$c.log" 2>&1 || true; done
    if [[ ${KEEP:-} == 1 ]]; then echo "kube-test: pod and volumes kept ($prefix*)"; else remove_ours; fi
    fixture_stop
    echo "kube-test: logs in $logs"
}
mkdir -p "$work"
remove_ours  # what a killed earlier run left
rm -rf "$logs"
mkdir -p "$logs"
trap cleanup EXIT
trap 'echo "kube-test: interrupted" >&2; exit 130' INT
trap 'echo "kube-test: terminated" >&2; exit 143' TERM

# ------------------------------------------------------------------ 1. the image and the manifests
step "build the image without network (make image-build, from the .deb of make deb)"
if make --no-print-directory image-build IMAGE="$image" >"$logs/image-build.log" 2>&1; then
    echo "$image: $(tail -n 1 "$logs/image-build.log")"
else
    die "make image-build failed: $(tail -n 5 "$logs/image-build.log" | one_line)"
fi

step "fixture pinning service on the host's loopback"
fixture_start "$work/fixture" "$logs/pinserver.log" || die "the fixture service did not start; log: $logs/pinserver.log"
fp1=$(fixture_fingerprint) fp2=$(fixture_fingerprint) fp_new=$(fixture_fingerprint)
fixture_route app/init challenge 0 "$fp1" "$fp2"
fixture_route app/next challenge 0 "$fp_new"
echo "https://localhost:$FIXTURE_PORT (PID $FIXTURE_PID)"

step "the sidecar manifests, turned into what podman 4.3 runs"
# transform_manifests NAME PRIVATE: packaging/kubernetes/sidecar/*.yaml as podman 4.3 can run
# them, on stdout; PRIVATE=no drops private_volumes from the ConfigMap (the refused control).
# Everything else of the manifests (security contexts, mounts, the ConfigMap's other keys, the
# image's command for the daemon) is used as written.
transform_manifests() {
    python3 - "$1" "$2" "$image" "$work/emptydir/$1" "$FIXTURE_CA/ca.pem" "$(fixture_store_toml banking app/init challenge \
        /etc/pinkeeper/test-ca.pem)" "$fp1 $fp_new" packaging/kubernetes/sidecar/configmap.yaml \
        packaging/kubernetes/sidecar/deployment.yaml <<'PY'
import os, sys, yaml
name, private, image, emptydirs, ca, store, fingerprints = sys.argv[1:8]
docs = [d for path in sys.argv[8:] for d in yaml.safe_load_all(open(path)) if d]
configmap = next(d for d in docs if d["kind"] == "ConfigMap")
deployment = next(d for d in docs if d["kind"] == "Deployment")
spec = deployment["spec"]["template"]["spec"]
# Names of our own, so that the pod (NAME-pod-0) and the ConfigMap's volume are this test's.
deployment["metadata"]["name"] = name
configmap["metadata"]["name"] = name + "-config"
# The store: the fixture service and its CA (an item of the ConfigMap) instead of the example's.
configmap["data"]["banking.toml"] = store
configmap["data"]["test-ca.pem"] = open(ca).read()
if private == "no":
    configmap["data"]["pinkeeper.toml"] = "".join(
        line for line in configmap["data"]["pinkeeper.toml"].splitlines(True) if not line.startswith("private_volumes"))
# One pod: podman 4.3 makes every replica, and they would share the hostPath directories that
# stand in for emptyDirs below (each pod has its own emptyDir).
deployment["spec"]["replicas"] = 1
# Host networking: the fixture service listens on the host's loopback (in a cluster, the
# pinning service is reached over the pod network).
spec["hostNetwork"] = True
# podman 4.3 runs init containers to completion, one after the other, and knows no
# restartPolicy on a container: the native sidecar becomes an ordinary container. The
# application then no longer waits for its startup probe (the test runs the probe's command).
daemon = next(c for c in spec["initContainers"] if c["name"] == "pinkeeper")
assert daemon.pop("restartPolicy") == "Always"
spec["initContainers"].remove(daemon)
spec["containers"].insert(0, daemon)
if not spec["initContainers"]:
    del spec["initContainers"]
for container in spec.get("initContainers", []) + spec["containers"]:
    # No registry: the image of `make image`.
    container["image"] = image
    # podman 4.3 makes health checks of probes, run by systemd timers; no systemd runs here.
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        container.pop(probe, None)
    # The proxy Secret is optional and absent in a cluster without a proxy; podman 4.3 looks it up
    # among its own secrets, so the variable is left out instead.
    container.pop("env", None)
app = next(c for c in spec["containers"] if c["name"] == "app")
# The application: the image's reader, `pinkeeper validate`, on the pins volume it mounts
# read-only, every 2 s, one line per pin: the first served pin, and one served only after the
# ConfigMap edit below.
app["command"] = ["/bin/sh", "-c", "while :; do for fp in " + fingerprints + "; do "
                  "echo \"reader $fp: $(pinkeeper validate --cache-directory /var/cache/pinkeeper/pins --store banking "
                  "--name pin1.test --fingerprint $fp 2>&1)\"; done; sleep 2; done"]
# emptyDir: podman makes a volume owned by the container's user, mode 0755, where kubelet makes
# a directory that is root's, mode 0777, bind-mounted into each container. The same here: a
# hostPath to such a directory (a bind mount, so a mount point in the container, as in a pod).
for volume in spec["volumes"]:
    if "emptyDir" in volume:
        path = os.path.join(emptydirs, volume["name"])
        os.makedirs(path)
        os.chmod(path, 0o777)
        volume.pop("emptyDir")
        volume["hostPath"] = {"path": path, "type": "Directory"}
    elif "configMap" in volume:
        volume["configMap"]["name"] = configmap["metadata"]["name"]
        volume["configMap"]["items"].append({"key": "test-ca.pem", "path": "test-ca.pem"})
yaml.safe_dump_all([configmap, deployment], sys.stdout, sort_keys=False)
PY
}
# podman 4.3 writes a ConfigMap's items into a volume named after it, but cannot create the
# directory of an item's path (stores.d/banking.toml): the volume is made first, with stores.d/.
make_config_volume() {
    podman volume create "$1" >/dev/null || return 1
    mkdir -p "$(podman volume inspect --format '{{.Mountpoint}}' "$1")/stores.d"
}
if transform_manifests "$prefix" yes >"$work/play.yaml" 2>"$logs/transform.log" && make_config_volume "$config_volume"; then
    check_pass transform "$work/play.yaml: sidecar to container, probes and proxy env dropped, emptyDirs as root's 0777 bind mounts"
else
    die "the manifests could not be transformed: $(one_line <"$logs/transform.log")"
fi

# ------------------------------------------------------------------ 2. the pod
step "podman kube play"
podman kube play "$work/play.yaml" >"$logs/play.log" 2>&1 || die "podman kube play failed: $(one_line <"$logs/play.log")"
sleep 1
for c in "$daemon" "$app"; do
    [[ $(podman inspect --format '{{.State.Running}}' "$c" 2>/dev/null) == true ]] ||
        die "$c is not running: $(podman logs --tail 3 "$c" 2>&1 | one_line)"
done
check_pass play "pod $pod: containers $daemon and $app running"

pins_dir=$work/emptydir/$prefix/pins
# wait_until SECONDS COMMAND...: true once COMMAND succeeds.
wait_until() {
    local i limit=$(($1 * 10))
    shift
    for ((i = 0; i < limit; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

step "the daemon publishes into the pins emptyDir"
why=''
if wait_until 30 test -f "$pins_dir/pins/banking.json" && why=$(cache_has_pins "$pins_dir/pins/banking.json" "$fp1" "$fp2"); then
    check_pass publish "pins/banking.json inside the pins emptyDir: $why"
else
    check_fail publish \
        "no banking.json with the served pins: ${why:-missing after 30 s}; log: $(podman logs --tail 3 "$daemon" 2>&1 | one_line)"
fi
# The startup probe's command, as kubelet would run it in the container.
if out=$(podman exec "$daemon" /bin/sh -c 'pinkeeper status >/dev/null; [ $? -le 1 ]' 2>&1); then
    check_pass startup-probe "the manifest's startup probe command passes in $daemon"
else
    check_fail startup-probe "pinkeeper status in $daemon: $out"
fi

step "users, capabilities and directories"
# status_of CONTAINER: the Uid, CapEff and NoNewPrivs of the container's main process.
status_of() {
    local pid
    pid=$(podman inspect --format '{{.State.Pid}}' "$1")
    [[ $(cat "/proc/$pid/comm") == tini ]] && pid=$(awk '{print $1}' "/proc/$pid/task/$pid/children")
    awk '$1 == "Uid:" || $1 == "CapEff:" || $1 == "NoNewPrivs:" { $1 = $1; printf "%s; ", $0 }' "/proc/$pid/status"
}
want="Uid: $uid $uid $uid $uid; CapEff: 0000000000000000; NoNewPrivs: 1; "
want_app="Uid: $app_uid $app_uid $app_uid $app_uid; CapEff: 0000000000000000; NoNewPrivs: 1; "
if [[ $(status_of "$daemon") == "$want" && $(status_of "$app") == "$want_app" ]]; then
    check_pass non-root "daemon: $(status_of "$daemon")app: $(status_of "$app")"
else
    check_fail non-root "daemon: $(status_of "$daemon")app: $(status_of "$app")(want UIDs $uid and $app_uid, no capability)"
fi
volumes="pins $(stat -c '%U %a' "$pins_dir"), pins/pins $(stat -c '%u %a' "$pins_dir/pins" 2>&1)"
state="state $(stat -c '%U %a' "$work/emptydir/$prefix/pinkeeper-state"), state/state"
state+=" $(stat -c '%u %a' "$work/emptydir/$prefix/pinkeeper-state/state" 2>&1)"
if [[ $volumes == "pins root 777, pins/pins $uid 755" && $state == *"root 777, state/state $uid 755" ]]; then
    check_pass directories "the emptyDirs stay root's 0777; the daemon's own directories in them: $volumes; $state"
else
    check_fail directories "$volumes; $state"
fi

metrics=$work/emptydir/$prefix/pinkeeper-metrics/prom/pinkeeper.prom
if wait_until 10 test -f "$metrics" && grep -q '^pinkeeper_' "$metrics"; then
    check_pass metrics \
        "the daemon made prom/ in the metrics emptyDir ($(stat -c '%u %a' "${metrics%/*}")) and writes the metrics file there"
else
    check_fail metrics "no metrics file at pinkeeper-metrics/prom/pinkeeper.prom: $(ls -la "${metrics%/*}" 2>&1 | one_line)"
fi

step "the application reads the pin through the reader, read-only"
# reader_trusts FINGERPRINT: the app container's reader has answered `trusted` for it.
reader_trusts() { podman logs "$app" 2>&1 | grep -q "^reader $1: trusted"; }
if wait_until 20 reader_trusts "$fp1"; then
    check_pass reader "the app container's reader: '$(podman logs "$app" 2>&1 | grep -m1 "^reader $fp1: trusted")'"
else
    check_fail reader "no 'trusted' for the served pin: $(podman logs --tail 2 "$app" 2>&1 | one_line)"
fi
if out=$(podman exec "$app" touch /var/cache/pinkeeper/pins/x 2>&1); then
    check_fail app-read-only "the application could create a file in the pins volume"
elif [[ $out == *"Read-only file system"* ]]; then
    check_pass app-read-only "the app container cannot write the pins volume: ${out##*: }"
else
    check_fail app-read-only "touch in the app container: $out"
fi

step "a ConfigMap change reaches the running daemon"
# podman 4.3 cannot update a ConfigMap of a running pod (`kube play --replace` recreates the pod,
# a restart); kubelet rewrites the volume's files in place. So the store's item is rewritten in
# the ConfigMap's volume, as an editor saves (a new file renamed over the old one): another
# route, which serves another pin.
config_dir=$(podman volume inspect --format '{{.Mountpoint}}' "$config_volume")
# changed_lines: the daemon's log lines saying it noticed a change of the configuration.
changed_lines() { podman logs "$daemon" 2>&1 | grep 'msg="configuration changed; reloading"'; }
before=$(changed_lines | wc -l)
# podman 4.3 writes the ConfigMap's items into the volume before the containers start but closes
# them after: the daemon must not take those closes (IN_CLOSE_WRITE, same contents) for an edit.
if ((before == 0)); then
    check_pass no-reload-at-start "no 'configuration changed; reloading' before the edit, though podman closed the files late"
else
    check_fail no-reload-at-start "the daemon reloaded an unchanged configuration: $(changed_lines | one_line)"
fi
reader_trusts "$fp_new" && check_fail configmap-change "the reader trusts the new route's pin before the edit"
fixture_store_toml banking app/next challenge /etc/pinkeeper/test-ca.pem >"$config_dir/stores.d/.banking.toml.new"
mv -f "$config_dir/stores.d/.banking.toml.new" "$config_dir/stores.d/banking.toml"
noticed() { changed_lines | tail -n +$((before + 1)) | grep -m1 ' file=/etc/pinkeeper/stores.d/banking.toml'; }
if wait_until 20 noticed && wait_until 20 reader_trusts "$fp_new"; then
    check_pass configmap-change "after the edit the daemon logged '$(noticed)'; the reader then trusts the new route's pin"
else
    detail="after the edit: '$(noticed)'; daemon log ends: $(podman logs --tail 3 "$daemon" 2>&1 | one_line)"
    check_fail configmap-change "$detail; reader: $(podman logs --tail 2 "$app" 2>&1 | one_line)"
fi
restarts=$(podman inspect --format '{{.RestartCount}}' "$daemon")
[[ $restarts == 0 ]] && check_pass no-restart "the daemon reloaded without a restart (restart count 0)" ||
    check_fail no-restart "the daemon was restarted $restarts times"

step "control: the same pod without private_volumes is refused"
if transform_manifests "$refused" no >"$work/refused.yaml" 2>>"$logs/transform.log" && make_config_volume "$refused-config" &&
    podman kube play "$work/refused.yaml" >>"$logs/play.log" 2>&1; then
    # The pod's restart policy starts the refused daemon again, so its log, not its state, tells.
    refusal() { podman logs "$refused-pod-0-pinkeeper" 2>&1 | grep -m1 'is writable by other users without the sticky bit'; }
    wait_until 15 refusal
    said=$(refusal)
    if [[ -n $said && ! -e $work/emptydir/$refused/pins/pins/banking.json ]]; then
        check_pass refused-control "without private_volumes the emptyDir is refused, nothing published: '$said'"
    else
        check_fail refused-control "expected a refusal: $(podman logs --tail 2 "$refused-pod-0-pinkeeper" 2>&1 | one_line)"
    fi
else
    check_fail refused-control "the control pod did not start: $(tail -n 3 "$logs/play.log" | one_line)"
fi

printf '\n%d passed, %d failed\n' "$CHECKS_PASSED" "$CHECKS_FAILED"
echo "kube-test: $((SECONDS - t_start)) s"
((CHECKS_FAILED == 0))
