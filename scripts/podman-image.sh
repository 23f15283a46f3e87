# shellcheck shell=bash
# What scripts/container-test.sh and scripts/kube-test.sh share about podman and the image under
# test; sourced from the top of the repository, not a program. Sets:
#   CONTAINERS_CONF  podman's configuration (exported): packaging/container/test/containers.conf
#                    unless set (runc and ulimits this host can grant; see that file)
#   version          the project's version, as Sources/PinKeeperDaemon/Core/Version.swift says
#   image            $IMAGE, or localhost/pinkeeper:<version> as `make image` tags it
export CONTAINERS_CONF=${CONTAINERS_CONF:-$(pwd -P)/packaging/container/test/containers.conf}
version=$(sed -n 's/.*static let string = "\([^"]*\)".*/\1/p' Sources/PinKeeperDaemon/Core/Version.swift)
image=${IMAGE:-localhost/pinkeeper:$version}
