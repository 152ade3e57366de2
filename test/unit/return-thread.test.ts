/**
 * What the requester's side shows of a thread and of the kit, without the person's own data:
 * `redactPersonal` (thread.ts) and the drafted message and dispute limits (kit.ts).
 */
import { describe, expect, it } from 'vitest';
import { cardDispute, draftMessage } from '../../servers/features/returns/kit.ts';
import { redactPersonal } from '../../servers/features/returns/thread.ts';

const byEmail = {
  requester_name: 'Jane Doe',
  contact: 'Jane.Doe@Example.com',
  contact_kind: 'email' as const,
};
const byPhone = { requester_name: 'Ann Lee', contact: '+14155550123', contact_kind: 'phone' as const };

describe('redactPersonal', () => {
  it("removes the person's contact, name and card numbers from a brand's reply, keeping the brand's own", () => {
    const reply =
      'Hi Jane Doe (jane.doe@example.com), Jane: refund for card 4242 4242 4242 4242 is on its way. ' +
      'Questions: support@brand.example or +1 800 555 0100.';
    expect(redactPersonal(reply, byEmail, 'brand')).toBe(
      'Hi [the person’s name] ([the person’s email]), [name]: refund for card [card ending 4242] is on its way. ' +
        'Questions: support@brand.example or +1 800 555 0100.',
    );
  });

  it("finds the person's phone however it is written", () => {
    for (const written of ['+1 415 555 0123', '(415) 555-0123', '415.555.0123', '4155550123']) {
      expect(redactPersonal(`Call me on ${written} today`, byPhone, 'brand')).toBe(
        'Call me on [the person’s phone] today',
      );
    }
  });

  it("removes every email and phone number from the requester's own words, but not dates or order numbers", () => {
    expect(
      redactPersonal(
        'Order A-1001 of 2026-11-02. Mail my partner at sam@example.org or ring +44 20 7946 0958.',
        byEmail,
        'requester',
      ),
    ).toBe('Order A-1001 of 2026-11-02. Mail my partner at [an email address] or ring [a phone number].');
  });

  it('leaves words that only contain a name part alone', () => {
    expect(redactPersonal('Leeds, Annex, ANN', byPhone, 'brand')).toBe('Leeds, Annex, ANN');
  });
});

describe('the kit', () => {
  const request = {
    id: '01a21f65-e8d7-7b85-a975-3c40d91c7b30',
    brand_domain: 'shop.example',
    brand_name: null,
    requester_name: 'Jane Doe',
    contact: 'jane@example.com',
    order_number: 'A-1001',
    card_last4: '4242',
    purchase_date: '2026-11-02',
    amount_cents: 4250,
    currency: 'EUR',
    message: 'Wrong size; write to jane@example.com.',
  };

  it('drafts the message filled for the requester and with placeholders for anyone else', () => {
    const filled = draftMessage(request, true, (t) => t);
    expect(filled.body).toContain(
      'of 42.50 EUR made on 2026-11-02 (order A-1001) paid with the card ending in 4242',
    );
    expect(filled.body).toContain('Please reply to me at jane@example.com.');
    const blank = draftMessage(request, false, (t) =>
      redactPersonal(t, { ...request, contact_kind: 'email' }, 'requester'),
    );
    expect(blank.body).not.toMatch(/Jane|jane@|4242/);
    expect(blank.body).toContain('[your name]');
    expect(blank.body).toContain('Wrong size; write to [the person’s email].');
  });

  it('counts the network limits from the purchase date when it is known, and names every source', () => {
    const limits = cardDispute('2026-11-02').time_limits;
    expect(limits.map((l) => l.approximate_last_day)).toEqual(['2027-03-02', '2027-03-02', null]);
    expect(cardDispute(null).time_limits.every((l) => l.approximate_last_day === null)).toBe(true);
    for (const limit of limits)
      expect(limit.source).toEqual({ name: expect.any(String), url: expect.stringMatching(/^https:/) });
  });
});
