# packaging/container/container.mk: the container image and its test. Included from the
# top-level Makefile, after packaging/packaging.mk (PK_TOP, PK_VERSION, PK_DEBOUT, `deb`).
#
#   make image            the image from packaging/container/Containerfile and the .deb of
#                         `make deb`, tagged $(IMAGE)
#   make container-test   that image under podman: read-only, no capabilities, non-root
#                         (scripts/container-test.sh; docs/testing.md)
#
# IMAGE_BASE: the image to build FROM. Unset: a local stand-in for debian:bookworm-slim imported
# from the cached Debian 12 root (scripts/make-container-base.sh), and the build runs without
# network; where a registry is reachable, IMAGE_BASE=docker.io/library/debian:bookworm-slim.
# CONTAINERS_CONF: podman's configuration; unset, packaging/container/test/containers.conf
# (runc and default ulimits that a host without CAP_SYS_RESOURCE can grant: see that file).

IMAGE        ?= localhost/pinkeeper:$(PK_VERSION)
IMAGE_BASE   ?=
# The repository's address for the source label: origin's, when it is a URL (not a local path).
IMAGE_SOURCE ?= $(filter https://% http://% ssh://% git@%,$(shell git -C $(PK_TOP) remote get-url origin 2>/dev/null))
IMAGE_CTX    := $(PK_TOP)/.build/image/context
IMAGE_DEB     = $(PK_DEBOUT)/pinkeeper_$(PK_VERSION)_$(shell dpkg --print-architecture).deb
export CONTAINERS_CONF ?= $(PK_TOP)/packaging/container/test/containers.conf

.PHONY: image image-build container-deps container-test

# catatonit: the pause process of the pods that `podman kube play` makes (make kube-test).
container-deps:
	@$(PK_TOP)/scripts/install-container-deps.sh podman runc catatonit

image: deb
	@$(MAKE) --no-print-directory -C $(PK_TOP) image-build

# The image from the .deb already built. --format docker: the OCI image format has no
# HEALTHCHECK. --layers=false: no build cache, which would keep the package layer of an older
# .deb (a bind-mounted file is no part of the cache key). A local base has every Debian package
# the build installs in its apt cache, so the build gets no network at all. The image it
# replaces is removed once nothing uses it.
image-build: container-deps
	@test -f $(IMAGE_DEB) || { echo "$(IMAGE_DEB) is missing: run make deb (or make image)" >&2; exit 1; }
	rm -rf $(IMAGE_CTX) && mkdir -p $(IMAGE_CTX)
	cp $(IMAGE_DEB) $(PK_TOP)/packaging/container/pinkeeper.toml $(PK_TOP)/packaging/container/pinkeeper.sysusers $(IMAGE_CTX)/
	old=$$(podman image inspect --format '{{.Id}}' $(IMAGE) 2>/dev/null); \
	base='$(IMAGE_BASE)'; network=''; \
	if [ -z "$$base" ]; then base=$$($(PK_TOP)/scripts/make-container-base.sh) || exit 1; network=--network=none; fi; \
	podman build --format docker --layers=false $$network --build-arg BASE=$$base --build-arg VERSION=$(PK_VERSION) \
	  --build-arg REVISION=$$(git -C $(PK_TOP) rev-parse HEAD 2>/dev/null) --build-arg SOURCE='$(IMAGE_SOURCE)' \
	  -f $(PK_TOP)/packaging/container/Containerfile -t $(IMAGE) $(IMAGE_CTX) || exit 1; \
	if [ -n "$$old" ]; then podman rmi "$$old" >/dev/null 2>&1 || true; fi
	@echo "built $(IMAGE): $$(podman run --rm --user 0 --health-cmd=none --entrypoint /usr/bin/du $(IMAGE) -sxm / | cut -f1) MB of files"

container-test: deb container-deps
	$(PK_TOP)/scripts/container-test.sh
