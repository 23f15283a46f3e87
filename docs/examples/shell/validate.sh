#!/usr/bin/env bash
# Is a TLS peer's certificate pinned? Answered from a pinkeeper cache file with jq, without pinkeeper.
#
#   validate.sh [-d DEPTH] [-t NOW] CACHE_FILE HOST FINGERPRINT
#
# HOST: the name the client connected to and verified the certificate for, never one read from
#   the certificate; names compare ASCII letters case-insensitively (jq's ascii_downcase).
# FINGERPRINT: standard base64 of the SHA-256 of the certificate's DER bytes, e.g.
#   openssl x509 -in cert.pem -outform DER | openssl dgst -sha256 -binary | base64
# -d DEPTH: the certificate's position in the verified chain, never in what the server sent
#           (0 = leaf, the default).
# -t NOW:   validate as of this Unix time (default: now).
#
# Prints trusted, untrusted or empty and exits 0, 1 or 2 (reject on both 1 and 2; 2 means the
# store has no live pin for the name and needs an update). 64 usage error, 65 not a pinkeeper
# cache file, 66 the file cannot be read, 69 jq is missing. Needs bash, jq and coreutils (base64).
# Rules: docs/cache-format.md, "Validating" (in a static-mode file, domainsConfig and entries
# with a depth are ignored: a static list does not sign them). Fallback pins and expected_common_names live in
# pinkeeper's configuration, not in the cache file; use the Python example or
# `pinkeeper validate` when a store has them.
set -euo pipefail

command -v jq >/dev/null 2>&1 || { echo "$0: needs jq (apt-get install jq)" >&2; exit 69; }

usage() { echo "usage: $0 [-d DEPTH] [-t NOW] CACHE_FILE HOST FINGERPRINT" >&2; exit 64; }

depth=0
now=$(date +%s)
while getopts ':d:t:' option; do
  case $option in
    d) depth=$OPTARG ;;
    t) now=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[[ $# -eq 3 ]] || usage
[[ $depth =~ ^[0-9]+$ && $now =~ ^[0-9]+$ ]] || usage
file=$1 name=$2

# Canonical form of the fingerprint (what pinkeeper writes): decode, check 32 bytes, re-encode.
raw_length=$(printf '%s' "$3" | base64 -d 2>/dev/null | wc -c) || raw_length=0
[[ $raw_length -eq 32 ]] || { echo "$0: FINGERPRINT must be the base64 of a 32-byte SHA-256 digest" >&2; exit 64; }
fingerprint=$(printf '%s' "$3" | base64 -d | base64 -w0)

[[ -r $file ]] || { echo "$0: cannot read $file" >&2; exit 66; }

# shellcheck disable=SC2016  # $name etc. are jq variables
answer=$(jq -r --arg name "$(printf '%s' "$name" | tr 'A-Z' 'a-z')" --arg fp "$fingerprint" --argjson depth "$depth" --argjson now "$now" '
  if (.pinkeeper.format? != 1) or ((.fingerprints | type) != "array") then "not-a-cache-file"
  elif ((.pinkeeper.mode // "challenge") | IN("challenge", "static") | not) then "not-a-cache-file"
  else
    # A static list signs only name&fingerprint&expires: its domainsConfig and depth decide nothing.
    (.pinkeeper.mode == "static") as $static
    | (if $static then [.fingerprints[] | select((.depth // 0) == 0)] else .fingerprints end) as $entries
    # domainsConfig: a listed domain uses its own flag, any other name sslPinningRequiredForUnlisted.
    # (Not `a // b`: jq treats false as missing there.)
    | (if $static or .domainsConfig == null then true
       else ([.domainsConfig.domains[]? | select((.name | ascii_downcase) == $name)]) as $listed
         | if ($listed | length) > 0 then $listed[0].sslPinningRequired
           else .domainsConfig.sslPinningRequiredForUnlisted end
       end) as $required
    | if ($required | not) then "trusted"
      elif ($entries | length) == 0 then "empty"
      else [$entries[]
             | select((.name | ascii_downcase) == $name and (.depth // 0) == $depth and .expires >= $now)] as $live
        | if ($live | length) == 0 then "empty"
          elif any($live[]; .fingerprint == $fp) then "trusted"
          else "untrusted" end
      end
  end' "$file" 2>/dev/null) || { echo "$0: $file is not JSON" >&2; exit 65; }

case $answer in
  trusted) echo trusted; exit 0 ;;
  untrusted) echo untrusted; exit 1 ;;
  empty) echo empty; exit 2 ;;
  *) echo "$0: $file is not a pinkeeper cache file of format 1 (or has an unknown list mode)" >&2; exit 65 ;;
esac
