// A forward proxy on loopback, for the test of corscope's uploads through
// the proxies of the environment (http_proxy, https_proxy): CONNECT
// tunnels (https) and absolute-URI requests (http), each one logged, with
// the Proxy-Authorization it carried, to DIR/proxy.log; DIR/port once
// listening.  With --auth USER:PASS it answers 407 to a request without
// those credentials.
//
// Usage: node proxy.mjs DIR [--auth USER:PASS]
import { createServer, request } from "node:http";
import { connect } from "node:net";
import { appendFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const [dir, flag, auth] = process.argv.slice(2);
mkdirSync(dir, { recursive: true });
const want = flag === "--auth" ? "Basic " + Buffer.from(auth).toString("base64") : null;
const log = (line) => appendFileSync(join(dir, "proxy.log"), line + "\n");
const allowed = (req) => !want || req.headers["proxy-authorization"] === want;

const server = createServer((req, res) => {
  log(`${req.method} ${req.url} auth=${req.headers["proxy-authorization"] ? "yes" : "no"}`);
  if (!allowed(req)) {
    res.writeHead(407, { "Proxy-Authenticate": "Basic" });
    return res.end();
  }
  const target = new URL(req.url);
  const headers = { ...req.headers };
  delete headers["proxy-authorization"];
  const up = request({ host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers },
    (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
  up.on("error", () => { res.writeHead(502); res.end(); });
  req.pipe(up);
});
server.on("connect", (req, socket, head) => {
  log(`CONNECT ${req.url} auth=${req.headers["proxy-authorization"] ? "yes" : "no"}`);
  if (!allowed(req)) {
    socket.end("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n");
    return;
  }
  const [host, port] = req.url.split(":");
  const up = connect(Number(port), host, () => {
    socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length) up.write(head);
    up.pipe(socket);
    socket.pipe(up);
  });
  up.on("error", () => socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
  socket.on("error", () => up.destroy());
});
server.listen(0, "127.0.0.1", () => writeFileSync(join(dir, "port"), String(server.address().port)));
process.on("SIGTERM", () => process.exit(0));
