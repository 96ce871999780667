import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../scripts/bench/processes";
import { tempDir } from "./helpers";

/** Debian's nginx (nginx-light), or undefined where it is missing (the tests that need it skip). */
export const nginx = Bun.which("nginx") ?? Bun.which("nginx", { PATH: "/usr/sbin" });
if (!nginx && process.env.STOREAPI_REQUIRE_NGINX)
  throw new Error("STOREAPI_REQUIRE_NGINX is set but nginx is not installed");

/**
 * nginx on a loopback port in front of `upstreams`, each store's Host hashed to one of them
 * (`hash $host consistent`). A node that refuses connections is skipped for 30 s and the
 * request goes to the next one: a POST is passed on only when it never reached the dead
 * node (nginx's default for non-idempotent requests), its body buffered. Bodies up to
 * 8 MiB are passed on, as the README's configuration does.
 */
export async function startNginx(upstreams: string[]) {
  const home = tempDir("storeapi-nginx-");
  const port = freePort();
  const config = join(home, "nginx.conf");
  writeFileSync(
    config,
    `daemon off;
master_process off;
pid ${home}/nginx.pid;
error_log ${home}/error.log warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${home}/body;
  proxy_temp_path ${home}/proxy;
  fastcgi_temp_path ${home}/fastcgi;
  uwsgi_temp_path ${home}/uwsgi;
  scgi_temp_path ${home}/scgi;
  upstream nodes {
    hash $host consistent;
${upstreams.map((upstream) => `    server ${upstream} max_fails=1 fail_timeout=30s;`).join("\n")}
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 8m;
    location / {
      proxy_pass http://nodes;
      proxy_set_header Host $host;
      proxy_next_upstream error timeout;
      proxy_read_timeout 60s;
    }
  }
}
`,
  );
  const proc = Bun.spawn([nginx as string, "-p", home, "-e", `${home}/error.log`, "-c", config], {
    stdout: "ignore",
    stderr: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  const log = () => readFileSync(join(home, "error.log"), "utf8").slice(-2000);
  for (let i = 0; ; i++) {
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (proc.exitCode !== null || i === 100) {
      proc.kill("SIGKILL");
      throw new Error(`nginx did not start: ${log()}`);
    }
    await Bun.sleep(100);
  }
  const stop = async () => {
    proc.kill("SIGKILL");
    await proc.exited;
    rmSync(home, { recursive: true, force: true });
  };
  return { url, stop, log };
}
