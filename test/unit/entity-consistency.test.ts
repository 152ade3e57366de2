/**
 * The entity comparison shared by the entity SKU and the scanner (`scans/collectors/entity.ts`):
 * statements read from a page and llms.txt, the site's own answer per field, and field-by-field
 * verdicts - including the near misses that must not count as agreement.
 */
import { describe, expect, it } from 'vitest';
import {
  brandSegment,
  compareField,
  entityClaimsOfLlmsTxt,
  entityClaimsOfPage,
  groundTruthOf,
  ownSourceConsistency,
} from '../../servers/features/scans/collectors/entity.ts';

const home = `<!doctype html><html><head><title>Home | Northwind Labs</title>
<meta name="description" content="Data pipelines for small teams.">
<meta property="og:site_name" content="Northwind Labs, Inc.">
<script type="application/ld+json">{"@context":"https://schema.org","@graph":[
 {"@type":"WebSite","name":"Northwind"},
 {"@type":"SoftwareCompany","name":"Northwind Labs","foundingDate":"2012-03-01",
  "address":{"@type":"PostalAddress","addressLocality":"Lisbon","addressCountry":{"@type":"Country","name":"Portugal"}},
  "founder":{"@type":"Person","name":"Ana Ferreira"},"sameAs":["https://www.wikidata.org/wiki/Q1"]},
 {"@type":"Product","name":"Streamline"}]}</script>
<script type="application/ld+json">{ not json</script></head><body><p>Hello</p></body></html>`;

describe('entity claims', () => {
  it('reads the organisation from JSON-LD (@graph, nested address and founder), the title and OpenGraph', () => {
    const claims = entityClaimsOfPage(home, 'https://nw.example/', { home: true, about: false });
    const of = (field: string, source: string) =>
      claims.filter((c) => c.field === field && c.source === source).map((c) => c.value);
    expect(of('name', 'json_ld')).toEqual(['Northwind Labs']);
    expect(of('founded', 'json_ld')).toEqual(['2012-03-01']);
    expect(of('headquarters', 'json_ld')).toEqual(['Lisbon, Portugal']);
    expect(of('people', 'json_ld')).toEqual(['Ana Ferreira']);
    expect(of('products', 'json_ld')).toEqual(['Streamline']);
    expect(of('category', 'json_ld')).toEqual(['software company']);
    expect(of('name', 'title')).toEqual(['Home | Northwind Labs']);
    expect(of('name', 'og_site_name')).toEqual(['Northwind Labs, Inc.']);
    // The WebSite node is not the organisation.
    expect(of('name', 'json_ld')).not.toContain('Northwind');
  });

  it('reads founding and headquarters sentences on the about page and in llms.txt', () => {
    const about =
      '<html><body><main><p>We were founded in 2012 and are headquartered in Lisbon, Portugal.</p></main></body></html>';
    const claims = entityClaimsOfPage(about, 'https://nw.example/about', { home: false, about: true });
    expect(claims.map((c) => [c.field, c.value])).toEqual([
      ['founded', '2012'],
      ['headquarters', 'Lisbon, Portugal'],
    ]);
    const llms = entityClaimsOfLlmsTxt(
      { title: 'Northwind Labs', summary: 'Pipelines. Based in Porto.' },
      'https://nw.example/llms.txt',
    );
    expect(llms.map((c) => [c.field, c.value])).toEqual([
      ['name', 'Northwind Labs'],
      ['description', 'Pipelines. Based in Porto.'],
      ['headquarters', 'Porto'],
    ]);
  });

  it("takes JSON-LD as the site's answer and finds the sources that disagree or are silent", () => {
    const claims = [
      ...entityClaimsOfPage(home, 'https://nw.example/', { home: true, about: false }),
      ...entityClaimsOfLlmsTxt(
        { title: 'Northwind Labs', summary: 'Based in Porto.' },
        'https://nw.example/llms.txt',
      ),
    ];
    const truth = groundTruthOf(claims);
    expect(truth.fields.name).toMatchObject({ value: 'Northwind Labs', source: 'json_ld' });
    expect(truth.fields.headquarters?.value).toBe('Lisbon, Portugal');
    const consistency = ownSourceConsistency(claims, truth, [
      { field: 'description', source: 'json_ld', source_url: 'https://nw.example/' },
    ]);
    const verdict = (source: string, field: string) =>
      consistency.find((c) => c.source === source && c.field === field)?.verdict;
    expect(verdict('title', 'name')).toBe('consistent');
    expect(verdict('og_site_name', 'name')).toBe('consistent');
    expect(verdict('llms_txt', 'headquarters')).toBe('drift');
    expect(verdict('json_ld', 'description')).toBe('missing');
  });
});

describe('compareField', () => {
  it('names: containment after legal forms, never a different name', () => {
    expect(compareField('name', 'Northwind Labs', 'Northwind Labs, Inc.')).toBe('consistent');
    expect(compareField('name', 'Northwind Labs', 'Northwind')).toBe('consistent');
    expect(compareField('name', 'Northwind Labs', 'Southbay Analytics')).toBe('drift');
    expect(compareField('name', 'Northwind Labs', 'Northwinds Lab')).toBe('drift');
    expect(compareField('name', null, 'Anything')).toBe('unknown');
    expect(compareField('name', 'Northwind Labs', null)).toBe('missing');
  });

  it('years, places, lists and descriptions', () => {
    expect(compareField('founded', '2012-03-01', 'Founded in 2012')).toBe('consistent');
    expect(compareField('founded', '2012', '2009')).toBe('drift');
    expect(compareField('founded', '2012', 'a long time ago')).toBe('missing');
    expect(compareField('headquarters', 'Lisbon, Portugal', 'Lisbon')).toBe('consistent');
    expect(compareField('headquarters', 'Lisbon, Portugal', 'Lisboa, Portugal')).toBe('drift');
    expect(compareField('headquarters', 'Lisbon, Portugal', 'Berlin, Germany')).toBe('drift');
    expect(compareField('products', ['Streamline', 'Flow'], ['Streamline Cloud'])).toBe('consistent');
    expect(compareField('products', ['Streamline'], ['Pipeline Pro'])).toBe('drift');
    expect(compareField('products', ['Streamline'], [])).toBe('missing');
    expect(
      compareField(
        'description',
        'Northwind Labs builds data pipeline software for small analytics teams.',
        'A maker of data pipeline software for analytics teams.',
      ),
    ).toBe('consistent');
    expect(
      compareField(
        'description',
        'Northwind Labs builds data pipeline software.',
        'A chain of coffee shops in Oregon.',
      ),
    ).toBe('drift');
  });

  it('the brand segment of a title', () => {
    expect(brandSegment('Home | Northwind Labs')).toBe('Northwind Labs');
    expect(brandSegment('Northwind Labs - Data pipelines for small teams')).toBe('Northwind Labs');
    expect(brandSegment('Northwind Labs')).toBe('Northwind Labs');
  });
});
