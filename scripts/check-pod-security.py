#!/usr/bin/env python3
"""Usage: scripts/check-pod-security.py MANIFEST...

Every pod template (Deployment, DaemonSet, StatefulSet, Job, Pod) in the manifests against Pod
Security's "restricted" profile, container by container, init containers included, from the
fields the admission controller reads: no host namespaces, hostPath, host ports, privileged
container, unmasked /proc or SELinux and AppArmor exemptions; volume types from the profile's
list; allowPrivilegeEscalation false; runAsNonRoot true and runAsUser not 0 (pod or container);
seccompProfile RuntimeDefault or Localhost (pod or container); capabilities drop ALL and add at
most NET_BIND_SERVICE. Also: the pinkeeper daemon is
the container named `pinkeeper`, and no other container mounts a volume it writes (its writable
mounts that are not configMap or secret volumes) without readOnly: true, since the daemon trusts
those volumes not to be written by anyone else (private_volumes, pinkeeper.toml(5)).
Prints each problem; exits 1 if there is any.
"""
import sys
from pathlib import Path

import yaml  # PyYAML, which kubernetes-validate depends on

ALLOWED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
DAEMON = "pinkeeper"


def pod_specs(documents):
    for doc in documents:
        kind = doc.get("kind")
        if kind == "Pod":
            yield f"Pod {doc['metadata']['name']}", doc["spec"]
        elif kind in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job"):
            yield f"{kind} {doc['metadata']['name']}", doc["spec"]["template"]["spec"]


def effective(pod_context, container_context, field):
    """A container's setting, else the pod's (as the admission controller resolves them)."""
    value = (container_context or {}).get(field)
    return (pod_context or {}).get(field) if value is None else value


def container_problems(container, pod_context):
    context = container.get("securityContext") or {}
    problems = []
    if context.get("privileged"):
        problems.append("privileged: true")
    if context.get("allowPrivilegeEscalation") is not False:
        problems.append("allowPrivilegeEscalation is not false")
    if effective(pod_context, context, "runAsNonRoot") is not True:
        problems.append("runAsNonRoot is not true (pod or container)")
    if effective(pod_context, context, "runAsUser") == 0:
        problems.append("runAsUser is 0")
    seccomp = (effective(pod_context, context, "seccompProfile") or {}).get("type")
    if seccomp not in ("RuntimeDefault", "Localhost"):
        problems.append(f"seccompProfile is {seccomp or 'unset'}, not RuntimeDefault or Localhost")
    capabilities = context.get("capabilities") or {}
    if "ALL" not in (capabilities.get("drop") or []):
        problems.append("capabilities do not drop ALL")
    added = [c for c in capabilities.get("add") or [] if c != "NET_BIND_SERVICE"]
    if added:
        problems.append(f"capabilities add {', '.join(added)} (only NET_BIND_SERVICE may be added)")
    if context.get("procMount", "Default") != "Default":
        problems.append(f"procMount is {context['procMount']}")
    selinux = effective(pod_context, context, "seLinuxOptions") or {}
    if selinux.get("user") or selinux.get("role") or selinux.get("type") not in (None, "", "container_t", "container_init_t",
                                                                                  "container_kvm_t", "container_engine_t"):
        problems.append(f"seLinuxOptions {selinux} are not allowed")
    if (effective(pod_context, context, "appArmorProfile") or {}).get("type") == "Unconfined":
        problems.append("appArmorProfile is Unconfined")
    ports = [p for p in container.get("ports") or [] if p.get("hostPort")]
    if ports:
        problems.append(f"hostPort {', '.join(str(p['hostPort']) for p in ports)}")
    return problems


def writable_volume_problems(where, spec, containers):
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    daemon = next((c for c in containers if c["name"] == DAEMON), None)
    if daemon is None:
        return [f"{where}: no container named {DAEMON} (the daemon)"]
    written = {m["name"] for m in daemon.get("volumeMounts") or []
               if not m.get("readOnly") and not {"configMap", "secret"} & set(volumes.get(m["name"], {}))}
    problems = []
    for container in containers:
        if container is daemon:
            continue
        for mount in container.get("volumeMounts") or []:
            if mount["name"] in written and not mount.get("readOnly"):
                problems.append(f"{where}: container {container['name']} mounts {mount['name']}, which the daemon writes, "
                                "without readOnly: true")
    return problems


def pod_problems(where, spec):
    problems = [f"{where}: {field}: true" for field in ("hostNetwork", "hostPID", "hostIPC") if spec.get(field)]
    for volume in spec.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= ALLOWED_VOLUMES:
            problems.append(f"{where}: volume {volume['name']} is {', '.join(sorted(kinds - ALLOWED_VOLUMES))}, "
                            f"not one of {', '.join(sorted(ALLOWED_VOLUMES))}")
    containers = [c for key in ("initContainers", "containers", "ephemeralContainers") for c in spec.get(key) or []]
    for container in containers:
        for problem in container_problems(container, spec.get("securityContext")):
            problems.append(f"{where}: container {container['name']}: {problem}")
    return problems + writable_volume_problems(where, spec, containers)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    documents = [doc for path in sys.argv[1:] for doc in yaml.safe_load_all(Path(path).read_text()) if doc]
    pods = list(pod_specs(documents))
    if not pods:
        sys.exit("check-pod-security: no pod template in the manifests")
    problems = [problem for where, spec in pods for problem in pod_problems(where, spec)]
    for problem in problems:
        print(f"check-pod-security: {problem}", file=sys.stderr)
    if problems:
        print(f"check-pod-security: {len(problems)} problems against Pod Security \"restricted\"", file=sys.stderr)
        sys.exit(1)
    names = ", ".join(where for where, _ in pods)
    print(f"check-pod-security: {names}: every container fits Pod Security \"restricted\"; only {DAEMON} writes its volumes")


if __name__ == "__main__":
    main()
