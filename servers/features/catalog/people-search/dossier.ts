/**
 * From the pages read to the dossier: pages about the person are clustered into candidates by the
 * attributes they share (an organisation, or a place when a page names no organisation), each
 * candidate scored against the context and location the caller gave; facts, the timeline,
 * affiliations and the digital footprint are taken from the pages only, each citing the page it was
 * read on (every source a page that was fetched). Pure.
 */
import { normalizeName, wordOverlap } from '../../scans/collectors/entity.ts';
import { isProfileUrl, mentions, type PageEvidence } from './extract.ts';

export interface SourcedPage {
  id: string;
  evidence: PageEvidence;
  title: string | null;
  retrieved_at: string;
}

export interface Candidate {
  id: string;
  name: string;
  description: string;
  location: string | null;
  confidence: number;
  source_ids: string[];
}

export interface DossierBody {
  candidates: Candidate[];
  key_facts: { fact: string; source_ids: string[]; candidate_id: string | null }[];
  timeline: { date: string; event: string; source_ids: string[]; candidate_id: string | null }[];
  affiliations: {
    organization: string;
    role: string | null;
    period: string | null;
    source_ids: string[];
    candidate_id: string | null;
  }[];
  digital_footprint: {
    kind: 'profile' | 'domain' | 'publication' | 'other';
    url: string;
    label: string;
    candidate_id: string | null;
  }[];
}

/**
 * Clusters pages that share an organisation. A page naming no organisation joins by place: the one
 * organisation cluster that shares its place, or other such pages of that place - never two
 * clusters at once (two people of one name in one city stay apart), so when the place is ambiguous
 * it stays alone.
 */
export function clusterPages(pages: readonly SourcedPage[]): SourcedPage[][] {
  const parent = pages.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i] as number] as number;
      i = parent[i] as number;
    }
    return i;
  };
  const union = (a: number, b: number) => {
    parent[find(a)] = find(b);
  };
  const orgKeys = pages.map((p) => new Set(p.evidence.organizations.map((o) => normalizeName(o.name))));
  const placeKeys = pages.map((p) => new Set(p.evidence.locations.map(cityKey)));
  const shares = (a: Set<string>, b: Set<string>) => [...a].some((k) => b.has(k));
  const withOrg = pages.map((_, i) => i).filter((i) => (orgKeys[i] as Set<string>).size > 0);
  const withoutOrg = pages.map((_, i) => i).filter((i) => (orgKeys[i] as Set<string>).size === 0);
  for (const i of withOrg) {
    for (const j of withOrg) {
      if (i < j && shares(orgKeys[i] as Set<string>, orgKeys[j] as Set<string>)) union(i, j);
    }
  }
  /** Organisation clusters that share a place with page i. */
  const placeClusters = (i: number) =>
    new Set(
      withOrg.filter((j) => shares(placeKeys[i] as Set<string>, placeKeys[j] as Set<string>)).map(find),
    );
  const unplaced: number[] = [];
  for (const i of withoutOrg) {
    const clusters = placeClusters(i);
    if (clusters.size === 1) union(i, [...clusters][0] as number);
    else if (clusters.size === 0) unplaced.push(i);
  }
  // Pages without an organisation whose place no organisation cluster shares: together by place.
  for (const i of unplaced) {
    for (const j of unplaced) {
      if (i < j && shares(placeKeys[i] as Set<string>, placeKeys[j] as Set<string>)) union(i, j);
    }
  }
  const groups = new Map<number, SourcedPage[]>();
  pages.forEach((page, i) => {
    const root = find(i);
    groups.set(root, [...(groups.get(root) ?? []), page]);
  });
  return [...groups.values()];
}

const cityKey = (place: string): string => normalizeName(place.split(',')[0] ?? place);

/** Most frequent first, ties in order of appearance. */
function ranked(values: readonly string[], key: (v: string) => string = normalizeName): string[] {
  const counts = new Map<string, { value: string; n: number; first: number }>();
  values.forEach((value, i) => {
    const k = key(value);
    const known = counts.get(k);
    if (known) known.n++;
    else counts.set(k, { value, n: 1, first: i });
  });
  return [...counts.values()].sort((a, b) => b.n - a.n || a.first - b.first).map((c) => c.value);
}

export function buildDossier(
  name: string,
  query: { context: string | null; location: string | null },
  pages: readonly SourcedPage[],
): DossierBody {
  const clusters = clusterPages(pages.filter((p) => p.evidence.about_person));
  const total = clusters.reduce((n, c) => n + c.length, 0);
  const scored = clusters.map((cluster) => scoreCluster(cluster, total, query));
  const sum = scored.reduce((s, c) => s + c.raw, 0);
  scored.sort((a, b) => b.raw - a.raw || b.cluster.length - a.cluster.length);

  const body: DossierBody = {
    candidates: [],
    key_facts: [],
    timeline: [],
    affiliations: [],
    digital_footprint: [],
  };
  scored.forEach(({ cluster, raw, places }, index) => {
    const id = `c${index + 1}`;
    // One candidate alone is as likely as what was found for it; several share the likelihood.
    const confidence = scored.length === 1 ? Math.min(0.95, raw) : raw / sum;
    body.candidates.push(candidateOf(name, id, cluster, places, confidence));
    body.timeline.push(...timelineOf(cluster, id));
    const affiliations = affiliationsOf(cluster, id);
    body.affiliations.push(...affiliations);
    // Structured facts first (one per organisation and per place, citing every page that states it), then statements.
    for (const a of affiliations) {
      body.key_facts.push({
        fact: `${name}: ${a.role ? `${a.role}, ` : ''}${a.organization}${a.period ? ` (${a.period})` : ''}`,
        source_ids: a.source_ids,
        candidate_id: id,
      });
    }
    for (const p of places) {
      const ids = cluster
        .filter((page) => page.evidence.locations.some((l) => cityKey(l) === cityKey(p)))
        .map((page) => page.id);
      body.key_facts.push({ fact: `${name}: located in ${p}`, source_ids: ids, candidate_id: id });
    }
    const facts = new Map<string, Set<string>>();
    for (const page of cluster) {
      for (const s of page.evidence.statements)
        facts.set(s, (facts.get(s) ?? new Set<string>()).add(page.id));
    }
    for (const [fact, ids] of facts) body.key_facts.push({ fact, source_ids: [...ids], candidate_id: id });
    body.digital_footprint.push(...footprintOf(cluster, id));
  });
  body.timeline.sort((a, b) => a.date.localeCompare(b.date));
  return body;
}

/**
 * How likely a cluster is the person asked about: its share of the pages, and how well it matches
 * the context and location given; its places, most named first.
 */
function scoreCluster(
  cluster: SourcedPage[],
  total: number,
  query: { context: string | null; location: string | null },
): { cluster: SourcedPage[]; raw: number; places: string[] } {
  const text = cluster
    .flatMap((p) => [
      p.title ?? '',
      ...p.evidence.statements,
      ...p.evidence.roles,
      ...p.evidence.organizations.map((o) => o.name),
    ])
    .join(' ');
  const places = ranked(
    cluster.flatMap((p) => p.evidence.locations),
    cityKey,
  );
  const share = cluster.length / Math.max(total, 1);
  const contextMatch = query.context ? Math.min(1, wordOverlap(query.context, text) * 1.5) : null;
  const locationMatch = query.location
    ? places.some(
        (p) =>
          mentions(p, cityKey(query.location as string)) || mentions(query.location as string, cityKey(p)),
      )
      ? 1
      : mentions(text, query.location)
        ? 1
        : 0
    : null;
  const parts: [number, number][] = [[share, 1]];
  if (contextMatch !== null) parts.push([contextMatch, 2]);
  if (locationMatch !== null) parts.push([locationMatch, 1.5]);
  const weight = parts.reduce((w, [, x]) => w + x, 0);
  const raw = 0.05 + parts.reduce((s, [v, w]) => s + v * w, 0) / weight;
  return { cluster, raw, places };
}

/** A cluster as a candidate: its most named role, organisation and place. */
function candidateOf(
  name: string,
  id: string,
  cluster: readonly SourcedPage[],
  places: readonly string[],
  confidence: number,
): DossierBody['candidates'][number] {
  const roles = ranked(cluster.flatMap((p) => p.evidence.roles));
  const orgs = ranked(cluster.flatMap((p) => p.evidence.organizations.map((o) => o.name)));
  const role = roles[0] ?? null;
  const org = orgs[0] ?? null;
  const place = places[0] ?? null;
  const description =
    [role, org ? `${role ? 'at ' : ''}${org}` : null, place ? `in ${place}` : null]
      .filter(Boolean)
      .join(' ') ||
    `Named on ${cluster.length} page${cluster.length === 1 ? '' : 's'} with nothing that tells who this is`;
  return {
    id,
    name,
    description,
    location: place,
    confidence: Math.round(confidence * 100) / 100,
    source_ids: cluster.map((p) => p.id),
  };
}

/** The dated events of a cluster's pages, one per date and event, citing every page that states it. */
function timelineOf(cluster: readonly SourcedPage[], id: string): DossierBody['timeline'] {
  const events = new Map<string, { date: string; event: string; ids: Set<string> }>();
  for (const page of cluster) {
    for (const d of page.evidence.dated) {
      const key = `${d.date}|${d.event}`;
      const known = events.get(key) ?? { ...d, ids: new Set<string>() };
      known.ids.add(page.id);
      events.set(key, known);
    }
  }
  return [...events.values()].map((e) => ({
    date: e.date,
    event: e.event,
    source_ids: [...e.ids],
    candidate_id: id,
  }));
}

/** The organisations of a cluster's pages, one per name, with the first role and period found. */
function affiliationsOf(cluster: readonly SourcedPage[], id: string): DossierBody['affiliations'] {
  const affiliations = new Map<string, DossierBody['affiliations'][number]>();
  for (const page of cluster) {
    for (const o of page.evidence.organizations) {
      const key = normalizeName(o.name);
      const period = periodOf(o.name, page.evidence);
      const known = affiliations.get(key);
      if (known) {
        known.role ??= o.role;
        known.period ??= period;
        if (!known.source_ids.includes(page.id)) known.source_ids.push(page.id);
      } else {
        affiliations.set(key, {
          organization: o.name,
          role: o.role,
          period,
          source_ids: [page.id],
          candidate_id: id,
        });
      }
    }
  }
  return [...affiliations.values()];
}

/** A cluster's pages and the profiles and domains they link to, one entry per URL. */
function footprintOf(cluster: readonly SourcedPage[], id: string): DossierBody['digital_footprint'] {
  const footprint = new Map<string, DossierBody['digital_footprint'][number]>();
  for (const page of cluster) {
    const kind = page.evidence.publication ? 'publication' : page.evidence.profile ? 'profile' : 'other';
    footprint.set(page.evidence.url, {
      kind,
      url: page.evidence.url,
      label: page.title ?? new URL(page.evidence.url).hostname,
      candidate_id: id,
    });
    for (const link of page.evidence.links) {
      if (footprint.has(link)) continue;
      footprint.set(link, {
        kind: isProfileUrl(link) ? 'profile' : 'domain',
        url: link,
        label: new URL(link).hostname.replace(/^www\./, ''),
        candidate_id: id,
      });
    }
  }
  return [...footprint.values()];
}

/** "since 2019" when a statement says the person joined or was named there that year. */
function periodOf(org: string, evidence: PageEvidence): string | null {
  for (const statement of evidence.statements) {
    if (!mentions(statement, org)) continue;
    const year = /\b((?:19|20)\d{2})\b/.exec(statement)?.[1];
    if (!year) continue;
    if (/\b(joined|since|named|appointed|hired|became|started)\b/i.test(statement)) return `since ${year}`;
    if (/\b(left|until|former|previously)\b/i.test(statement)) return `until ${year}`;
    return year;
  }
  return null;
}

/** A summary in the pages' own terms, when no language model writes one. */
export function extractiveSummary(name: string, body: DossierBody, pagesRead: number): string {
  const [first, ...others] = body.candidates;
  if (!first) {
    return `No page read (${pagesRead}) says anything about a person named ${name}; nothing can be said about them from the open web.`;
  }
  const lead =
    body.candidates.length === 1
      ? `One person named ${name} was found on ${first.source_ids.length} of the pages read: ${first.description} (confidence ${first.confidence}).`
      : `${body.candidates.length} different people named ${name} were found on the pages read. The most likely match is ${first.description} (confidence ${first.confidence}, sources ${first.source_ids.join(', ')}).`;
  const rest = others.length
    ? ` Others: ${others.map((c) => `${c.description} (confidence ${c.confidence})`).join('; ')}.`
    : '';
  return `${lead}${rest} Each fact below cites the page it was read on; nothing here was verified beyond those pages.`;
}
