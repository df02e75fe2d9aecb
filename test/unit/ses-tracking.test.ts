import { describe, expect, it } from 'vitest';
import { trackHtml } from '../../local/ses-tracking.js';

/** SES's rewriting of a message's HTML part for open and click tracking, as the local SES does it. */
const BASE = 'http://127.0.0.1:8006';
const both = { open: true, click: true, baseUrl: BASE };
const TOKEN = '[A-Za-z0-9_-]{22}';

describe('trackHtml', () => {
  it('rewrites every http(s) link to a token of its own, keeping the original (entities decoded) and its ses:tags', () => {
    const { html, tracking } = trackHtml(
      [
        '<p><a href="https://acme.test/pricing?a=1&amp;b=2" ses:tags="campaign:spring;position:top">Pricing</a>',
        `<A class="x" HREF='http://acme.test/plain'>Plain</A>`,
        '<a title="a > b" href=https://acme.test/unquoted>Unquoted</a></p>',
      ].join(''),
      { ...both, open: false },
    );
    expect(tracking.links.map((l) => l.url)).toEqual([
      'https://acme.test/pricing?a=1&b=2',
      'http://acme.test/plain',
      'https://acme.test/unquoted',
    ]);
    expect(tracking.links[0]?.tags).toEqual({ campaign: ['spring'], position: ['top'] });
    expect(tracking.links[1]?.tags).toEqual({});
    expect(new Set(tracking.links.map((l) => l.token)).size).toBe(3);
    for (const link of tracking.links) {
      expect(link.token).toMatch(new RegExp(`^${TOKEN}$`));
      expect(html).toContain(`href="${BASE}/L0/${link.token}"`);
    }
    // The rest of each tag is kept; the original URLs are gone from the message.
    expect(html).toContain(`<A class="x" href="${BASE}/L0/`);
    expect(html).toContain('<a title="a > b" href="');
    expect(html).not.toContain('acme.test');
    expect(tracking.open).toBeUndefined();
  });

  it('reads a numeric entity past Unicode (or a surrogate) as written, rather than failing the send', () => {
    const { tracking } = trackHtml('<a href="https://acme.test/?x=&#99999999;&#xD800;&#65;">x</a>', both);
    expect(tracking.links.map((l) => l.url)).toEqual(['https://acme.test/?x=&#99999999;&#xD800;A']);
  });

  it('leaves ses:no-track anchors, mailto:, tel:, fragments and anchors without href as they are', () => {
    const input = [
      '<a ses:no-track href="https://acme.test/private">Private</a>',
      '<a href="mailto:hi@acme.test">Mail</a>',
      '<a href="tel:+15550100">Call</a>',
      '<a href="#top">Top</a>',
      '<a name="anchor">Anchor</a>',
      '<abbr title="https://acme.test">abbr</abbr>',
    ].join('');
    const { html, tracking } = trackHtml(input, { ...both, open: false });
    expect(html).toBe(input);
    expect(tracking.links).toEqual([]);
  });

  it('adds the open pixel before </body>, or at the end without one', () => {
    const inBody = trackHtml('<html><body><p>Hi</p></body></html>', { ...both, click: false });
    expect(inBody.tracking.open).toMatch(new RegExp(`^${TOKEN}$`));
    expect(inBody.html).toMatch(
      new RegExp(
        `^<html><body><p>Hi</p><img alt="" src="${BASE}/I0/${inBody.tracking.open}"[^>]*></body></html>$`,
      ),
    );
    const bare = trackHtml('<p>Hi</p>', { ...both, click: false });
    expect(bare.html).toMatch(
      new RegExp(`^<p>Hi</p><img alt="" src="${BASE}/I0/${TOKEN}" width="1" height="1"`),
    );
  });

  it('puts the pixel at the first {{ses:openTracker}} and removes the others', () => {
    const { html, tracking } = trackHtml(
      '<p>{{ses:openTracker}}Hi{{ses:openTracker}}</p>{{ses:openTracker}}',
      {
        ...both,
        click: false,
      },
    );
    expect(html).toMatch(new RegExp(`^<p><img alt="" src="${BASE}/I0/${tracking.open}"[^>]*>Hi</p>$`));
  });

  it('with a custom redirect domain, still points at the local host and names the domain', () => {
    const { html } = trackHtml('<a href="https://acme.test/">x</a>', {
      ...both,
      customDomain: 'track.acme.test',
    });
    expect(html).toMatch(new RegExp(`href="${BASE}/L0/${TOKEN}\\?domain=track\\.acme\\.test"`));
    expect(html).toMatch(new RegExp(`src="${BASE}/I0/${TOKEN}\\?domain=track\\.acme\\.test"`));
  });

  it('changes nothing with both off', () => {
    const input = '<a href="https://acme.test/">x</a>{{ses:openTracker}}';
    expect(trackHtml(input, { ...both, open: false, click: false })).toEqual({
      html: input,
      tracking: { links: [] },
    });
  });
});
