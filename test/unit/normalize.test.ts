import { describe, expect, it } from 'vitest';
import { canonicalTokens, normalizeDescriptor } from '../../servers/features/charges/normalize.ts';

describe('normalizeDescriptor', () => {
  it.each([
    ['POS PURCHASE STARBUCKS STORE 11234 SEATTLE WA', 'STARBUCKS', null],
    ['CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA', 'NETFLIX', null],
    ['PURCHASE AUTHORIZED ON 03/12 NETFLIX.COM LOS GATOS CA S464071234567890 CARD 1234', 'NETFLIX', null],
    ['APLPAY CHIPOTLE 1234 NEW YORK NY', 'CHIPOTLE', null],
    ['DEBIT CARD PURCHASE 01/12 TARGET T-1234 MINNEAPOLIS MN', 'TARGET', null],
    ['SQ *BLUE BOTTLE COFFEE Oakland CA', 'BLUE BOTTLE COFFEE', 'Square'],
    ['TST* JOES DINER 12345 AUSTIN TX', 'JOES DINER', 'Toast'],
    ['PAYPAL *NETFLIX 402-935-7733 CA', 'NETFLIX', 'PayPal'],
    ['PP*SPOTIFY', 'SPOTIFY', 'PayPal'],
    ['SP * ALLBIRDS', 'ALLBIRDS', 'Shopify'],
    ['SP GYMSHARK.COM', 'GYMSHARK', 'Shopify'],
    ['GOOGLE *YouTubePremium g.co/helppay#', 'YOUTUBEPREMIUM', 'Google Play'],
    ['APPLE.COM/BILL 866-712-7753 CA', '', 'Apple'],
    ['AMZN Mktp US*2K4LL1A23 Amzn.com/bill WA', '', 'Amazon Marketplace'],
    ['PADDLE.NET* N8N', 'N8N', 'Paddle'],
    // A short code before * reads as a facilitator here; the matcher undoes it when the code is a brand.
    ['UBER *TRIP HELP.UBER.COM CA', 'TRIP', 'UBER'],
    ['SPOTIFY P1A2B3C4D5 STOCKHOLM SE', 'SPOTIFY', null],
    ["MCDONALD'S F12345 CHICAGO IL", 'MCDONALDS', null],
    ['WHOLEFDS MKT 10234 AUSTIN TX', 'WHOLEFDS MKT', null],
    ['CKE*CARLS JR 1234', 'CKE CARLS JR', null],
    ['Kartenzahlung REWE Markt GmbH 12.03.2025', 'REWE MARKT GMBH', null],
    ['CB CARREFOUR 12/03', 'CARREFOUR', null],
    ['Café Müller', 'CAFE MULLER', null],
  ])('%s -> %s (processor %s)', (line, normalized, processor) => {
    const result = normalizeDescriptor(line);
    expect(result.normalized).toBe(normalized);
    expect(result.processor?.name ?? null).toBe(processor);
  });

  it('collects registrable domains from the city field', () => {
    expect(normalizeDescriptor('UBER *EATS HELP.UBER.COM CA').domains).toEqual(['uber.com']);
    expect(normalizeDescriptor('NETFLIX.COM 866-579-7172 CA').domains).toEqual(['netflix.com']);
  });

  it('keeps a leading number that is part of the name, drops trailing numbers', () => {
    expect(normalizeDescriptor('365 BY WHOLE FOODS 123456').tokens).toEqual(['365', 'BY', 'WHOLE', 'FOODS']);
  });

  it('canonicalizes aliases the same way as lines', () => {
    expect(canonicalTokens('Amazon.co.uk')).toEqual(['AMAZON']);
    expect(canonicalTokens("Carl's Jr.")).toEqual(['CARLS', 'JR']);
    expect(canonicalTokens('H&M')).toEqual(['H&M']);
  });
});
