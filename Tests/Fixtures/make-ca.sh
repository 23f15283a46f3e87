#!/usr/bin/env bash
# Usage: make-ca.sh OUTDIR [extra SAN names...]
# Creates throw-away TLS material and P-256 signing keys for the pinserver.py fixture:
#   ca.key/ca.pem                 test CA (the daemon under test is told to trust it)
#   server.key/server.pem         CN=localhost, SAN localhost, 127.0.0.1 (+ extras), signed by CA
#   untrusted.key/untrusted.pem   same names, self-signed (must be rejected)
#   wrongname.key/wrongname.pem   signed by CA, SAN DNS:wrong.invalid only (host name mismatch)
#   signing.key, signing2.key     PKCS#8 P-256 list-signing keys
#   signing.pub.b64, signing2.pub.b64  base64 of the 65-byte uncompressed point (client format)
#   signing.pub.pem, signing2.pub.pem  SPKI PEM, for `openssl dgst -verify` in tests
# Idempotent: does nothing when OUTDIR/ca.pem exists (and is valid for another day).
# Extra SAN names only take effect on the run that creates the material.
set -euo pipefail

if [[ $# -lt 1 ]]; then
    echo "usage: $0 OUTDIR [extra SAN names...]" >&2
    exit 2
fi
out=$1
shift
mkdir -p "$out"

# Parallel test processes may share OUTDIR: serialize, and re-check under the lock.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$out/.make-ca.lock"
    flock 9
fi
if [[ -f $out/ca.pem ]] &&
    openssl x509 -checkend 86400 -noout -in "$out/ca.pem" >/dev/null 2>&1; then
    exit 0
fi

work=$(mktemp -d "$out/.make-ca.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Keep stdout clean: openssl chatter goes to a file, shown only when a step fails.
run() {
    if ! "$@" >"$work/log" 2>&1; then
        echo "make-ca.sh: failed: $*" >&2
        cat "$work/log" >&2
        exit 1
    fi
}

san="DNS:localhost,IP:127.0.0.1"
for name in "$@"; do
    if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then san+=",IP:$name"; else san+=",DNS:$name"; fi
done

# A private config so results do not depend on the system openssl.cnf defaults.
cat >"$work/openssl.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[leaf]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = $san
[selfsigned]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
subjectAltName = $san
[wrongname]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:wrong.invalid
EOF
cnf=$work/openssl.cnf
days=30

newkey() { run openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/$1.key"; }
serial() { echo "0x$(openssl rand -hex 16)"; }

# CA-signed leaf: NAME CN EXTENSION-SECTION
leaf() {
    newkey "$1"
    run openssl req -new -config "$cnf" -key "$work/$1.key" -subj "/CN=$2" -out "$work/$1.csr"
    run openssl x509 -req -in "$work/$1.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
        -set_serial "$(serial)" -days "$days" -sha256 -extfile "$cnf" -extensions "$3" \
        -out "$work/$1.pem"
}

# List-signing key pair: the client wants the raw 65-byte point, which is the tail of the SPKI DER.
signing() {
    newkey "$1"
    run openssl pkey -in "$work/$1.key" -pubout -out "$work/$1.pub.pem"
    openssl pkey -in "$work/$1.key" -pubout -outform DER | tail -c 65 | openssl base64 -A \
        | tr -d '\n' >"$work/$1.pub.b64"
}

newkey ca
run openssl req -x509 -new -config "$cnf" -extensions ca -key "$work/ca.key" \
    -subj "/CN=pinkeeper test CA" -set_serial "$(serial)" -days "$days" -sha256 -out "$work/ca.pem"
leaf server localhost leaf
leaf wrongname wrong.invalid wrongname
newkey untrusted
run openssl req -x509 -new -config "$cnf" -extensions selfsigned -key "$work/untrusted.key" \
    -subj "/CN=localhost" -set_serial "$(serial)" -days "$days" -sha256 -out "$work/untrusted.pem"
signing signing
signing signing2

# ca.pem is moved last: its presence means the whole set is complete.
rm -f "$work"/*.csr
for f in server wrongname untrusted signing signing2; do
    mv -f "$work/$f".* "$out/"
done
mv -f "$work/ca.key" "$out/ca.key"
mv -f "$work/ca.pem" "$out/ca.pem"
