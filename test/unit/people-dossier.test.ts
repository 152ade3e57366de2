/**
 * people-search's pure parts: the search formulations, what a page says about the person, and how
 * pages become candidates - same organisation together, same place only when a page names no
 * organisation, different organisations apart even in one city.
 */
import { describe, expect, it } from 'vitest';
import {
  buildDossier,
  clusterPages,
  type SourcedPage,
} from '../../servers/features/catalog/people-search/dossier.ts';
import { pageEvidence } from '../../servers/features/catalog/people-search/extract.ts';
import { formulations } from '../../servers/features/catalog/people-search/research.ts';

const page = (id: string, html: string): SourcedPage => {
  const evidence = pageEvidence(html, `https://example.org/${id}`, 'Sam Lee', null);
  return { id, evidence, title: evidence.title, retrieved_at: '2026-11-25T00:00:00.000Z' };
};

describe('people-search', () => {
  it('searches the quoted name alone, with context, with location, with both, and as a profile', () => {
    expect(
      formulations({ name: ' Sam "Lee" ', context: 'nurse at Mercy Hospital', location: 'Denver' }),
    ).toEqual([
      '"Sam Lee"',
      '"Sam Lee" nurse at Mercy Hospital',
      '"Sam Lee" Denver',
      '"Sam Lee" nurse at Mercy Hospital Denver',
      '"Sam Lee" profile',
    ]);
    expect(formulations({ name: 'Sam Lee' })).toEqual(['"Sam Lee"', '"Sam Lee" profile']);
  });

  it('reads statements, organisations, places and dates about the person, and nothing about others', () => {
    const evidence = pageEvidence(
      '<html><head><title>Staff</title></head><body><p>Sam Lee is a Senior Nurse at Mercy Hospital in Denver. She joined Mercy Hospital on June 1, 2020.</p><p>Alex Kim works at Acme Robotics.</p></body></html>',
      'https://example.org/staff',
      'Sam Lee',
      null,
    );
    expect(evidence.about_person).toBe(true);
    expect(evidence.statements).toEqual([
      'Sam Lee is a Senior Nurse at Mercy Hospital in Denver.',
      'She joined Mercy Hospital on June 1, 2020.',
    ]);
    expect(evidence.organizations).toEqual([{ name: 'Mercy Hospital', role: 'Senior Nurse' }]);
    expect(evidence.locations).toEqual(['Denver']);
    expect(evidence.dated).toEqual([
      { date: '2020-06-01', event: 'She joined Mercy Hospital on June 1, 2020.' },
    ]);
    expect(
      pageEvidence('<p>Samuel Leeds was here.</p>', 'https://example.org/x', 'Sam Lee', null).about_person,
    ).toBe(false);
  });

  it('clusters by shared organisation, by place only without one, and keeps two organisations in one city apart', () => {
    const nurse = page('s1', '<p>Sam Lee is a nurse at Mercy Hospital in Denver.</p>');
    const nurse2 = page('s2', '<p>Sam Lee of Mercy Hospital spoke on Monday.</p>');
    const denverOnly = page('s3', '<p>Sam Lee lives in Denver.</p>');
    const engineer = page('s4', '<p>Sam Lee is an engineer at Front Range Software in Denver.</p>');
    const clusters = clusterPages([nurse, nurse2, denverOnly, engineer]).map((c) =>
      c.map((p) => p.id).sort(),
    );
    expect(clusters).toContainEqual(['s4']);
    // Denver is both candidates' city: the page that names no organisation stays alone.
    expect(clusters).toContainEqual(['s3']);
    // Pages without an organisation in a city no cluster names go together.
    const elsewhere = [
      page('s5', '<p>Sam Lee lives in Boise.</p>'),
      page('s6', '<p>Sam Lee moved, based in Boise.</p>'),
      page('s7', '<p>Sam Lee lives in Boise too.</p>'),
    ];
    expect(clusterPages(elsewhere).map((c) => c.map((p) => p.id))).toEqual([['s5', 's6', 's7']]);
    expect(clusters.find((c) => c.includes('s1'))).toEqual(expect.arrayContaining(['s1', 's2']));
    expect(clusters.find((c) => c.includes('s1'))).not.toContain('s4');

    const dossier = buildDossier('Sam Lee', { context: 'software engineer', location: null }, [
      nurse,
      nurse2,
      engineer,
    ]);
    expect(dossier.candidates.map((c) => c.source_ids)).toEqual([['s4'], ['s1', 's2']]);
    expect(dossier.candidates[0]?.confidence).toBeGreaterThan(dossier.candidates[1]?.confidence ?? 1);
    const sum = dossier.candidates.reduce((n, c) => n + c.confidence, 0);
    expect(sum).toBeCloseTo(1, 1);
  });
});
