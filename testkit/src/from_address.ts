import http from 'node:http';

/** A response read whole. */
export type PlainResponse = { status: number; headers: http.IncomingHttpHeaders; body: string; json(): unknown };

/**
 * Sends an HTTP request whose socket is bound to a given loopback address (127.0.0.2, …), so the
 * gateway sees that address as the peer. Headers may repeat (pairs are sent as given).
 */
export function requestFrom(
  localAddress: string,
  url: string,
  init: { method?: string; headers?: [string, string][]; body?: string } = {},
): Promise<PlainResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    // Raw header pairs keep repeats, but then Node sends no Host of its own.
    const headers = [['host', target.host], ...(init.headers ?? [])].flat();
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: init.method ?? 'GET',
        localAddress,
        headers,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}
