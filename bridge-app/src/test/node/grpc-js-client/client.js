'use strict';
// A proxyless gRPC client on grpc-js's own xDS implementation (@grpc/grpc-js-xds), driven over stdin and stdout by
// GrpcJsZookeeperEndToEndTest: one JSON request a line in, one JSON answer a line out, each carrying the request's id.
// It resolves xds:///<host> through the xDS server named by the bootstrap in GRPC_XDS_BOOTSTRAP_CONFIG and calls
// meshbridge.e2e.Identity/Name, whose answer is the name of the backend that served the call.
//
// Requests:
//   {"id": 1, "op": "versions"}                      -> {"id": 1, "grpcJs": "...", "grpcJsXds": "...", "node": "..."}
//   {"id": 2, "op": "call", "host": "h", "n": 100}   -> n calls one after another: {"id": 2, "answeredBy": {...},
//                                                       "failures": [...]}
//   {"id": 3, "op": "start", "hosts": ["a", "b"]}    -> calls the hosts in turn until "stop": {"id": 3}
//   {"id": 4, "op": "progress"}                      -> the traffic's calls so far: {"id": 4, "answeredBy", "failures"}
//   {"id": 5, "op": "stop"}                          -> stops the traffic after the call in flight; its calls
const grpc = require('@grpc/grpc-js');
const xds = require('@grpc/grpc-js-xds');
const readline = require('readline');

xds.register();

const METHOD = '/meshbridge.e2e.Identity/Name';
const DEADLINE_MS = 5000;
const clients = new Map();

function client(host) {
  let c = clients.get(host);
  if (!c) {
    c = new grpc.Client('xds:///' + host, grpc.credentials.createInsecure());
    clients.set(host, c);
  }
  return c;
}

/** google.protobuf.StringValue: field 1, a length-delimited string (absent when empty). */
function stringValue(bytes) {
  if (bytes.length === 0) return '';
  if (bytes[0] !== 0x0a) throw new Error('not a StringValue');
  let length = 0;
  let shift = 0;
  let i = 1;
  for (;;) {
    const b = bytes[i++];
    length |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
    shift += 7;
  }
  return bytes.subarray(i, i + length).toString('utf8');
}

/** One call; resolves to the answering backend's name, rejects with "<code> <details>". */
function ask(host) {
  return new Promise((resolve, reject) => {
    client(host).makeUnaryRequest(
      METHOD,
      () => Buffer.alloc(0), // google.protobuf.Empty
      stringValue,
      {},
      { deadline: Date.now() + DEADLINE_MS },
      (error, value) => {
        if (error) reject(new Error(grpc.status[error.code] + ' ' + error.details));
        else resolve(value);
      });
  });
}

function tally() {
  return { answeredBy: {}, failures: [] };
}

async function record(into, host) {
  try {
    const who = await ask(host);
    into.answeredBy[who] = (into.answeredBy[who] || 0) + 1;
  } catch (e) {
    into.failures.push(host + ': ' + e.message);
  }
}

let traffic = null;

async function run(hosts, state) {
  while (state.running) {
    for (const h of hosts) {
      if (!state.running) break;
      await record(state.calls, h);
    }
  }
}

async function handle(req) {
  switch (req.op) {
    case 'versions':
      return {
        grpcJs: require('@grpc/grpc-js/package.json').version,
        grpcJsXds: require('@grpc/grpc-js-xds/package.json').version,
        node: process.versions.node,
      };
    case 'call': {
      const calls = tally();
      for (let i = 0; i < req.n; i++) await record(calls, req.host);
      return calls;
    }
    case 'start': {
      if (traffic) throw new Error('traffic already running');
      traffic = { running: true, calls: tally() };
      traffic.done = run(req.hosts, traffic);
      return {};
    }
    case 'progress':
      if (!traffic) throw new Error('no traffic running');
      return traffic.calls;
    case 'stop': {
      if (!traffic) throw new Error('no traffic running');
      const t = traffic;
      t.running = false;
      await t.done;
      traffic = null;
      return t.calls;
    }
    default:
      throw new Error('unknown op ' + req.op);
  }
}

const input = readline.createInterface({ input: process.stdin });
input.on('line', (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    process.stdout.write(JSON.stringify({ id: -1, error: 'not JSON: ' + e.message }) + '\n');
    return;
  }
  handle(req).then(
    (answer) => process.stdout.write(JSON.stringify({ id: req.id, ...answer }) + '\n'),
    (e) => process.stdout.write(JSON.stringify({ id: req.id, error: String(e && e.message) }) + '\n'));
});
input.on('close', () => {
  for (const c of clients.values()) c.close();
  process.exit(0);
});
