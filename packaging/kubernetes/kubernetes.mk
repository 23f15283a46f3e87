# packaging/kubernetes/kubernetes.mk: `make k8s-check`, run by `make test`, and `make
# kube-test`. Included from the top-level Makefile, after packaging/container/container.mk.
#
# Every manifest in packaging/kubernetes/ against the API schemas that kubernetes-validate
# (PyPI) bundles, offline and without a cluster; --strict also rejects unknown fields, so a
# misspelt securityContext key fails instead of being dropped by the API server. Checked for
# 1.29 (the oldest release whose native sidecars, deployment.yaml's restartPolicy: Always
# initContainer, are on by default) and for the newest release the package knows. Then the
# configuration the pods would mount, projected as kubelet lays it out, through `pinkeeper
# check-config` of a debug build (scripts/check-k8s-config.py). Then the pods that must fit Pod
# Security "restricted" (K8S_RESTRICTED, the sidecar) against that profile's fields, and that
# only the daemon mounts its volumes writable (scripts/check-pod-security.py).

K8S_MANIFESTS = $(sort $(wildcard $(PK_TOP)/packaging/kubernetes/*/*.yaml))
K8S_VERSIONS ?= 1.29.0 latest
# The DaemonSet needs hostPath, so a privileged namespace; the sidecar fits "restricted".
K8S_RESTRICTED = $(PK_TOP)/packaging/kubernetes/sidecar/deployment.yaml
K8S_PRIVILEGED = $(PK_TOP)/packaging/kubernetes/daemonset/daemonset.yaml

.PHONY: k8s-check k8s-deps kube-test

# kubernetes-validate, and with it PyYAML, which kube-test's manifest transform needs too.
k8s-deps:
	@python3 -c 'import kubernetes_validate, yaml' 2>/dev/null || { \
	  echo "installing the Python kubernetes-validate package"; python3 -m pip install --quiet kubernetes-validate; }

k8s-check: k8s-deps
	@for v in $(K8S_VERSIONS); do \
	  python3 -m kubernetes_validate --strict --quiet $$([ $$v = latest ] || echo -k $$v) $(K8S_MANIFESTS) || exit 1; \
	  [ $$v = latest ] && v="$$(python3 -m kubernetes_validate --version) (the newest it knows)"; \
	  echo "k8s-check: $(words $(K8S_MANIFESTS)) manifests valid (--strict) for Kubernetes $$v"; done
	@$(SWIFT) build $(SWIFT_FLAGS) --product pinkeeper >/dev/null
	@$(PK_TOP)/scripts/check-k8s-config.py "$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/pinkeeper" $(K8S_MANIFESTS)
	@$(PK_TOP)/scripts/check-pod-security.py $(K8S_RESTRICTED)
	@# The DaemonSet needs hostPath and root: the check must refuse it, or it checks nothing.
	@! $(PK_TOP)/scripts/check-pod-security.py $(K8S_PRIVILEGED) >/dev/null 2>&1 || \
	  { echo "check-pod-security.py accepted $(K8S_PRIVILEGED), which is not restricted" >&2; exit 1; }

# The sidecar's Deployment and ConfigMap under `podman kube play`, with the image of `make
# image` (built from the .deb here, as container-test does) and a fixture pinning service on the
# host's loopback; what podman 4.3 cannot run is changed in one visible step of the script
# (scripts/kube-test.sh; README.md beside the manifests, "Tried under podman").
kube-test: deb container-deps k8s-deps
	IMAGE=$(IMAGE) $(PK_TOP)/scripts/kube-test.sh
