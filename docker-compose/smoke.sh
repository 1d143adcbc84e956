#!/usr/bin/env bash
# Smoke test of the running demo (docker compose up -d --build): waits until the bridge has synced every registry
# and Envoy is ready, then calls each route through Envoy and prints which service and instance answered.
# Exits 0 when every route answered, 1 otherwise. Needs curl.
set -uo pipefail

ENVOY=${ENVOY:-http://127.0.0.1:8080}
ENVOY_ADMIN=${ENVOY_ADMIN:-http://127.0.0.1:9901}
EGRESS=${EGRESS:-http://127.0.0.1:15001}
EGRESS_ADMIN=${EGRESS_ADMIN:-http://127.0.0.1:9902}
BRIDGE_ADMIN=${BRIDGE_ADMIN:-http://127.0.0.1:15080}
TIMEOUT=${TIMEOUT:-240}        # seconds to wait for each step (the first start of Nacos is slow)

deadline=$((SECONDS + TIMEOUT))

# wait_for <what> <url>: polls until the URL answers 2xx
wait_for() {
  printf 'waiting for %s ' "$1"
  until curl -fsS -o /dev/null --max-time 5 "$2" 2>/dev/null; do
    if (( SECONDS >= deadline )); then
      printf '\ntimed out after %ss: %s\n' "$TIMEOUT" "$(curl -sS --max-time 5 "$2" 2>&1 | head -c 400)"
      return 1
    fi
    printf '.'
    sleep 2
  done
  printf ' ok\n'
}

# call <path> [host]: GETs the path through Envoy (with a Host header: through the egress Envoy) until it answers 200
# (a route appears once its service has registered)
call() {
  local url="$ENVOY$1" body code
  local -a extra=()
  if [[ -n ${2:-} ]]; then url="$EGRESS$1"; extra=(-H "Host: $2"); fi
  while :; do
    body=$(curl -sS --max-time 5 -w '\n%{http_code}' "${extra[@]}" "$url" 2>&1)
    code=${body##*$'\n'}
    body=${body%$'\n'*}
    if [[ $code == 200 ]]; then
      printf '  GET %-30s -> %s\n' "${2:+$2 }$1" "$body"
      return 0
    fi
    if (( SECONDS >= deadline )); then
      printf '  GET %-30s FAILED (HTTP %s): %s\n' "${2:+$2 }$1" "$code" "${body:0:300}"
      return 1
    fi
    sleep 2
  done
}

wait_for "the bridge to sync every registry" "$BRIDGE_ADMIN/ready" || exit 1
wait_for "Envoy" "$ENVOY_ADMIN/ready" || exit 1
wait_for "the egress Envoy" "$EGRESS_ADMIN/ready" || exit 1

echo "routes through Envoy at $ENVOY:"
failed=0
for route in /dubbo /nacos /eureka /consul; do
  call "$route/hello?name=smoke" || failed=1
done
# one host, endpoints from ZooKeeper and Nacos: successive calls are answered by both greeters
for _ in 1 2 3 4; do
  call "/greeter/hello?name=smoke" || failed=1
done


# the egress Envoy: no route of anyone's writing, only the bridge's outbound listener, by each service's host
echo
echo "services by name through the egress Envoy at $EGRESS:"
call "/hello?name=smoke" hello.eureka || failed=1
call "/hello?name=smoke" hello.dc1.consul || failed=1
call "/hello?name=smoke" greeter-zk.dubbo || failed=1
call "/hello?name=smoke" dev.meshbridge.samples.dubbo.greeter.dubbo || failed=1

echo
echo "the catalog:       curl -s $BRIDGE_ADMIN/debug/catalog"
echo "what Envoy got:    curl -s $BRIDGE_ADMIN/debug/xds   (or $ENVOY_ADMIN/config_dump)"
echo "the routes:        curl -s $BRIDGE_ADMIN/debug/ingress"
if (( failed )); then echo "SMOKE FAILED"; exit 1; fi
echo "SMOKE OK"
