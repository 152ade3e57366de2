/**
 * Install snippets returned by POST /pixel-install. Two ways in, because they see different visitors:
 * the browser beacon sees people (and browser agents that run JavaScript); only the server-side
 * feed sees AI crawlers and fetchers, which neither run scripts nor load images.
 *
 * Collection endpoints (served by the traffic feature, both on the public API):
 * - `GET  {public_api_url}/beacon?site=<site_id>&url=<page>&ref=<referrer>` -> 204 (`img=1`: 1x1 GIF)
 * - `POST {public_api_url}/events` with `x-service-key`, body `{ site_id, events: [...] }` (<= 1,000)
 */
export const BEACON_PATH = '/beacon';
export const EVENTS_PATH = '/events';
export const MAX_EVENTS_PER_BATCH = 1000;

export interface InstallSnippets {
  script: string;
  noscript: string;
  express: string;
  nginx: string;
}

export function collectionUrls(publicApiUrl: string): { beacon_url: string; events_url: string } {
  return { beacon_url: publicApiUrl + BEACON_PATH, events_url: publicApiUrl + EVENTS_PATH };
}

export function installSnippets(publicApiUrl: string, siteId: string): InstallSnippets {
  const { beacon_url, events_url } = collectionUrls(publicApiUrl);
  const beacon = `${beacon_url}?site=${siteId}`;
  const script =
    '<script>(function(d,l){try{fetch(' +
    `${JSON.stringify(beacon)}+'&url='+encodeURIComponent(l.href)+'&ref='+encodeURIComponent(d.referrer),` +
    "{mode:'no-cors',credentials:'omit',keepalive:true}).catch(function(){})}catch(e){}})(document,location);</script>";
  const noscript = `<noscript><img src="${beacon}&amp;img=1" width="1" height="1" alt="" referrerpolicy="no-referrer-when-downgrade" style="position:absolute;left:-9999px"></noscript>`;
  const express = `// Server-side feed: sees AI crawlers that never run the beacon. Node 18+, no dependencies.
// Put it before your routes: app.use(agentTraffic(process.env.AGENT_SERVICE_KEY));
function agentTraffic(serviceKey, siteId = ${JSON.stringify(siteId)}, endpoint = ${JSON.stringify(events_url)}) {
  let queue = [];
  const flush = () => {
    if (queue.length === 0) return;
    const events = queue.splice(0, ${MAX_EVENTS_PER_BATCH});
    fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': serviceKey },
      body: JSON.stringify({ site_id: siteId, events }),
    }).catch(() => {});
  };
  setInterval(flush, 5000).unref();
  process.once('beforeExit', flush);
  return (req, res, next) => {
    res.on('finish', () => {
      queue.push({
        ts: new Date().toISOString(),
        url: \`\${req.protocol}://\${req.get('host')}\${req.originalUrl}\`,
        user_agent: req.get('user-agent') ?? '',
        ip: req.ip,
        referrer: req.get('referer'),
        status: res.statusCode,
        headers: { 'signature-agent': req.get('signature-agent'), 'signature-input': req.get('signature-input') },
      });
      if (queue.length >= ${MAX_EVENTS_PER_BATCH}) flush();
      if (queue.length > 10 * ${MAX_EVENTS_PER_BATCH}) queue = queue.slice(-${MAX_EVENTS_PER_BATCH});
    });
    next();
  };
}`;
  const nginx = `# 1. In the http {} block: one JSON line per request.
log_format agent_events escape=json '{"ts":"$time_iso8601","url":"$scheme://$host$request_uri","user_agent":"$http_user_agent","ip":"$remote_addr","referrer":"$http_referer","status":$status,"headers":{"signature-agent":"$http_signature_agent","signature-input":"$http_signature_input"}}';
access_log /var/log/nginx/agent-events.log agent_events;

# 2. Ship it every minute (crontab; needs jq and curl; AGENT_SERVICE_KEY in the environment):
* * * * * f=/var/log/nginx/agent-events.log; mv "$f" "$f.1" && nginx -s reopen && sleep 1 && jq -cs '_nwise(${MAX_EVENTS_PER_BATCH}) | {site_id: "${siteId}", events: .}' "$f.1" | while read -r batch; do curl -sf -X POST -H 'content-type: application/json' -H "x-service-key: $AGENT_SERVICE_KEY" --data-binary "$batch" ${events_url}; done`;
  return { script, noscript, express, nginx };
}
