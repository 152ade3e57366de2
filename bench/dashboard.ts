/**
 * A signed-in owner for the page benchmark: an account with a password and a site, signed in to
 * the dashboard through the authorization server's sign-in page as a cookie-jar browser. Returns
 * the Cookie header of the dashboard session and the dashboard paths worth measuring.
 */
import { authorizeInBrowser, CookieJar } from '../test/helpers/oauth.ts';

export async function signedInDashboard(serviceUrl: string): Promise<{ cookie: string; paths: string[] }> {
  const api = `${serviceUrl}/api/public`;
  const owner = { email: `bench-${Date.now()}@dashboard.test`, password: 'correct horse battery staple' };
  const account = await fetch(`${api}/account`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(owner),
  });
  if (account.status !== 201) throw new Error(`POST /account: ${account.status}`);
  const key = ((await account.json()) as { key: { service_key: string } }).key.service_key;
  const install = await fetch(`${api}/pixel-install`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-key': key },
    body: JSON.stringify({ domain: 'bench-dashboard.com' }),
  });
  if (!install.ok) throw new Error(`POST /pixel-install: ${install.status} ${await install.text()}`);
  const siteId = ((await install.json()) as { site_id: string }).site_id;

  const jar = new CookieJar();
  const start = await jar.fetch(`${serviceUrl}/dashboard/sign-in`);
  const flow = await authorizeInBrowser(start.headers.get('location') as string, owner, {
    jar,
    stopAt: (url) => url.includes('/dashboard/callback'),
  });
  const back = await jar.fetch(flow.redirect.href);
  if (back.status !== 303) throw new Error(`dashboard sign-in: ${back.status}`);
  return { cookie: jar.header(), paths: ['/dashboard', `/dashboard/sites/${siteId}`] };
}
