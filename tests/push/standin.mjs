// A loopback stand-in for Grafana Pyroscope's push API, for the tests of
// corscope's uploads (record --push, the agent alone, corscope push): it
// implements what Pyroscope's distributor does with a push before it
// stores it, and keeps what it received for the test to check.
//
//   POST {prefix}/push.v1.PusherService/Push, Content-Type application/proto
//   (Connect's unary protocol), body a push.v1.PushRequest
//   { repeated RawProfileSeries series = 1 }, RawProfileSeries
//   { repeated types.v1.LabelPair labels = 1; repeated RawSample samples = 2 },
//   LabelPair { string name = 1; string value = 2 }, RawSample
//   { bytes raw_profile = 1; string ID = 2 }; raw_profile a pprof, gzipped.
//   Answer: 200 with an empty push.v1.PushResponse (application/proto), or
//   a Connect error: the HTTP status of its code and a JSON body
//   {"code": "...", "message": "..."}.
//
// Each profile is gunzipped and decoded with pprof-format (the maintained JS
// decoder of profile.proto) and checked as Pyroscope would refuse it: a
// service_name and a __name__ label, label names Prometheus accepts
// (dots allowed), sample types, a string table whose indexes hold,
// locations and functions that resolve.  A request that fails is answered
// 400 invalid_argument, as Pyroscope does, and recorded as refused.
//
// Usage: node standin.mjs DIR [--port N] [--tls CERT KEY] [--basic USER:PASS]
//          [--bearer TOKEN] [--tenant ID] [--status CODE] [--hang]
// (--hang: read each request whole, write DIR/hung-N.json, never answer.)
// Writes DIR/port once listening, DIR/req-N.bin (each body as received),
// DIR/req-N.json (headers, and per series its labels and the decoded
// profile's summary) and DIR/refused-N.json.  Stops on SIGTERM.
import { createServer as createHttp } from "node:http";
import { createServer as createHttps } from "node:https";
import { gunzipSync } from "node:zlib";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(new URL("../viewers/package.json", import.meta.url));
const { Profile } = require("pprof-format");

const args = process.argv.slice(2);
const dir = args.shift();
const opt = { port: 0 };
while (args.length) {
  const a = args.shift();
  if (a === "--port") opt.port = Number(args.shift());
  else if (a === "--tls") { opt.cert = args.shift(); opt.key = args.shift(); }
  else if (a === "--basic") opt.basic = args.shift();
  else if (a === "--bearer") opt.bearer = args.shift();
  else if (a === "--tenant") opt.tenant = args.shift();
  else if (a === "--status") opt.status = Number(args.shift());
  else if (a === "--hang") opt.hang = true;
  else throw new Error("unknown option " + a);
}
mkdirSync(dir, { recursive: true });

// ---- protobuf ---------------------------------------------------------------
function fields(buf) {
  const out = [];
  let i = 0;
  const varint = () => {
    let v = 0n, shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error("truncated varint");
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
      if (shift > 63n) throw new Error("varint too long");
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const field = key >> 3, wire = key & 7;
    if (wire === 0) out.push({ field, value: varint() });
    else if (wire === 2) {
      const n = Number(varint());
      if (i + n > buf.length) throw new Error("truncated bytes");
      out.push({ field, bytes: buf.subarray(i, i + n) });
      i += n;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_.]*$/;

function decodePush(body) {
  const series = [];
  for (const s of fields(body)) {
    if (s.field !== 1) throw new Error(`PushRequest field ${s.field}`);
    const labels = {}, profiles = [];
    for (const f of fields(s.bytes)) {
      if (f.field === 1) {
        let name = "", value = "";
        for (const l of fields(f.bytes)) {
          if (l.field === 1) name = l.bytes.toString("utf8");
          else if (l.field === 2) value = l.bytes.toString("utf8");
        }
        if (!LABEL_NAME.test(name)) throw new Error(`invalid label name '${name}'`);
        if (name in labels) throw new Error(`duplicate label ${name}`);
        labels[name] = value;
      } else if (f.field === 2) {
        let raw = null, id = "";
        for (const r of fields(f.bytes)) {
          if (r.field === 1) raw = r.bytes;
          else if (r.field === 2) id = r.bytes.toString("utf8");
        }
        profiles.push({ id, profile: summarize(raw) });
      }
    }
    if (!labels.service_name) throw new Error("service name is not provided");
    if (!labels.__name__) throw new Error("no __name__ label");
    series.push({ labels, profiles });
  }
  if (!series.length) throw new Error("no profiles received");
  return series;
}

function summarize(raw) {
  if (!raw || raw[0] !== 0x1f || raw[1] !== 0x8b) throw new Error("raw_profile is not gzipped");
  const p = Profile.decode(gunzipSync(raw));
  const strings = p.stringTable.strings;
  const str = (i) => {
    const s = strings[Number(i)];
    if (s === undefined) throw new Error(`string index ${i} out of range`);
    return s;
  };
  if (strings[0] !== "") throw new Error("string table does not start with \"\"");
  const types = p.sampleType.map((t) => ({ type: str(t.type), unit: str(t.unit) }));
  const locs = new Map(p.location.map((l) => [Number(l.id), l]));
  const funcs = new Map(p.function.map((f) => [Number(f.id), f]));
  const totals = types.map(() => 0);
  const stacks = [];
  const byLeafFunction = {};
  for (const s of p.sample) {
    if (s.value.length !== types.length) throw new Error("a sample's values do not match the sample types");
    const names = s.locationId.map((id) => {
      const l = locs.get(Number(id));
      if (!l) throw new Error(`location ${id} missing`);
      const f = funcs.get(Number(l.line[0].functionId));
      if (!f) throw new Error(`function of location ${id} missing`);
      return str(f.name);
    });
    s.value.forEach((v, k) => { totals[k] += Number(v); });
    for (const l of s.label) {
      str(l.key);
      if (Number(l.str)) throw new Error(`sample label '${str(l.key)}' is a string: Pyroscope makes a series of it`);
    }
    stacks.push({ frames: names.reverse(), values: s.value.map(Number) });
  }
  for (const st of stacks) {
    const leaf = st.frames[st.frames.length - 1] || "";
    byLeafFunction[leaf] = (byLeafFunction[leaf] || 0) + st.values[st.values.length - 1];
  }
  return {
    types,
    periodType: p.periodType ? { type: str(p.periodType.type), unit: str(p.periodType.unit) } : null,
    period: Number(p.period),
    timeNanos: String(p.timeNanos),
    durationNanos: String(p.durationNanos),
    samples: p.sample.length,
    totals,
    stacks,
  };
}

// ---- the server -------------------------------------------------------------
let n = 0;
function connectError(res, status, code, message) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ code, message }));
}

function handle(req, res) {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const k = ++n;
    const record = { path: req.url, headers: req.headers, bytes: body.length, time: Date.now() };
    if (opt.hang) {
      writeFileSync(join(dir, `hung-${k}.json`), JSON.stringify(record, null, 1));
      return; /* the response is never written: the client waits for nothing */
    }
    const refuse = (status, code, message) => {
      record.refused = { status, code, message };
      writeFileSync(join(dir, `refused-${k}.json`), JSON.stringify(record, null, 1));
      connectError(res, status, code, message);
    };
    if (req.method !== "POST" || !req.url.endsWith("/push.v1.PusherService/Push"))
      return refuse(404, "unimplemented", `no ${req.method} ${req.url}`);
    if (opt.status) return refuse(opt.status, opt.status >= 500 ? "unavailable" : "invalid_argument", "told to refuse");
    if ((req.headers["content-type"] || "") !== "application/proto")
      return refuse(415, "invalid_argument", `content type ${req.headers["content-type"]}`);
    if (opt.basic && req.headers.authorization !== "Basic " + Buffer.from(opt.basic).toString("base64"))
      return refuse(401, "unauthenticated", "bad or no basic auth");
    if (opt.bearer && req.headers.authorization !== "Bearer " + opt.bearer)
      return refuse(401, "unauthenticated", "bad or no bearer token");
    if (opt.tenant && req.headers["x-scope-orgid"] !== opt.tenant)
      return refuse(401, "unauthenticated", "no tenant");
    writeFileSync(join(dir, `req-${k}.bin`), body);
    try {
      record.series = decodePush(body);
    } catch (e) {
      return refuse(400, "invalid_argument", String(e.message || e));
    }
    writeFileSync(join(dir, `req-${k}.json`), JSON.stringify(record, null, 1));
    res.writeHead(200, { "Content-Type": "application/proto" });
    res.end();
  });
}

const server = opt.cert
  ? createHttps({ cert: readFileSync(opt.cert), key: readFileSync(opt.key) }, handle)
  : createHttp(handle);
server.keepAliveTimeout = 30000;
server.listen(opt.port, "127.0.0.1", () => {
  writeFileSync(join(dir, "port"), String(server.address().port));
});
process.on("SIGTERM", () => { server.close(); server.closeAllConnections?.(); process.exit(0); });
