#!/usr/bin/env python3
"""Usage: scripts/check-k8s-config.py PINKEEPER MANIFEST...

The configuration the Kubernetes manifests give the daemon, checked by the daemon itself: for
every configMap volume of a DaemonSet or Deployment, the files kubelet would project (each item's
key at its path, or every key at its own name) are written to a scratch directory and
`PINKEEPER check-config` must accept them. Also fails when a volume names a ConfigMap or key that
the manifests do not define, or a container mounts a volume the pod does not have.
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml  # PyYAML, which kubernetes-validate depends on


def pod_specs(documents):
    for doc in documents:
        if doc.get("kind") in ("DaemonSet", "Deployment"):
            yield doc["metadata"]["name"], doc["spec"]["template"]["spec"]


def check_pod(name, spec, config_maps, pinkeeper):
    problems = []
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for container in spec.get("initContainers", []) + spec.get("containers", []):
        for mount in container.get("volumeMounts", []):
            if mount["name"] not in volumes:
                problems.append(f"{name}: container {container['name']} mounts volume {mount['name']}, which the pod lacks")
    for volume in volumes.values():
        source = volume.get("configMap")
        if source is None:
            continue
        data = config_maps.get(source["name"])
        if data is None:
            problems.append(f"{name}: volume {volume['name']} names ConfigMap {source['name']}, which is not in the manifests")
            continue
        items = source.get("items") or [{"key": key, "path": key} for key in data]
        with tempfile.TemporaryDirectory() as scratch:
            for item in items:
                if item["key"] not in data:
                    problems.append(f"{name}: volume {volume['name']} projects key {item['key']}, which ConfigMap {source['name']} lacks")
                    continue
                target = Path(scratch, item["path"])
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(data[item["key"]])
            run = subprocess.run([pinkeeper, "check-config", "--config", str(Path(scratch, "pinkeeper.toml"))],
                                 capture_output=True, text=True)
            output = (run.stdout + run.stderr).strip().replace(scratch, "/etc/pinkeeper")
            if run.returncode != 0:
                problems.append(f"{name}: ConfigMap {source['name']} rejected (exit {run.returncode}): {output}")
            else:
                print(f"check-k8s-config: {name}: ConfigMap {source['name']} as mounted: {output.splitlines()[0] if output else 'valid'}")
    return problems


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    pinkeeper, manifests = sys.argv[1], sys.argv[2:]
    documents = [doc for path in manifests for doc in yaml.safe_load_all(Path(path).read_text()) if doc]
    config_maps = {doc["metadata"]["name"]: doc.get("data", {}) for doc in documents if doc.get("kind") == "ConfigMap"}
    problems = []
    pods = list(pod_specs(documents))
    for name, spec in pods:
        problems += check_pod(name, spec, config_maps, pinkeeper)
    for problem in problems:
        print(f"check-k8s-config: {problem}", file=sys.stderr)
    if not pods:
        sys.exit("check-k8s-config: no DaemonSet or Deployment in the manifests")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
