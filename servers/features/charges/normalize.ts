/**
 * Card statement line -> merchant tokens.
 *
 * A descriptor is what the acquirer sent in ISO 8583 DE43 (name 22-25 characters, city 13, state or
 * country 2-3), decorated by the issuer (`POS PURCHASE`, `CHECKCARD 0312`, dates, card digits) and
 * often by a payment facilitator prefix (`SQ *`, `TST*`, `PAYPAL *`). For card-not-present charges
 * the city field holds a phone number or a URL. This module peels those layers off; `matcher.ts`
 * decides which brand the remaining tokens name.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/min';
import { getDomain } from 'tldts';
import { detectProcessor, type Processor } from './processors.ts';

export interface NormalizedDescriptor {
  /** Best-effort merchant name: noise, references, location and city removed. */
  normalized: string;
  /** Canonical tokens of the merchant part, city still included (matching tolerates it). */
  tokens: string[];
  /** `tokens` without the trailing city guess. */
  merchantTokens: string[];
  processor: Processor | null;
  /**
   * Canonical tokens of the processor prefix (`GOOGLE *ADS` -> `GOOGLE`): some brands bill under a
   * processor-style prefix of their own, so the matcher also tries the line with it.
   */
  prefixTokens: string[];
  /** Registrable domains that appeared in the line (`HELP.UBER.COM` -> `uber.com`). */
  domains: string[];
  /** The city field as read (`FORT COLLINS`), when the line ends with a state or country code. */
  city: string | null;
  /** US state or Canadian province code (`CO`, `ON`). */
  region: string | null;
  /** ISO 3166-1 alpha-2 country, from a country code or implied by the region. */
  country: string | null;
  /** E.164 when it parses as a real number, otherwise the digits as printed. */
  phone: string | null;
}

/** Issuer-added words and codes that precede the merchant (US and European banks). */
const issuerNoise = new RegExp(
  String.raw`^(?:` +
    [
      String.raw`POS(?: DEBIT| PURCHASE| PUR| PRCH| REFUND| SALE)?`,
      String.raw`(?:DEBIT |DBT |VISA DDA |DDA |VISA )?(?:CARD )?PURCHASE(?: RETURN)?(?: WITH PIN)?(?: AUTHORI[ZS]ED ON \d{1,2}/\d{1,2})?`,
      String.raw`VISA DDA PUR`,
      String.raw`CHECK ?CARD(?: \d{4})?`,
      String.raw`RECURRING(?: PAYMENT| CHARGE| DEBIT| CARD)?(?: AUTHORI[ZS]ED ON \d{1,2}/\d{1,2})?`,
      String.raw`PRE-?AUTHORI[ZS]ED(?: DEBIT| PAYMENT)?`,
      String.raw`PRE-?AUTH`,
      String.raw`APLPAY|APPLE ?PAY|GPAY|GOOGLE PAY|SAMSUNG PAY|CONTACTLESS|TAP`,
      // ACH and bill-pay exports (the fields themselves are read by `bankExportMerchant`).
      String.raw`ACH(?: DEBIT| WITHDRAWAL| PMT| PAYMENT| TRANSFER)?|ELECTRONIC (?:WITHDRAWAL|PAYMENT|PMT)|EXTERNAL WITHDRAWAL`,
      String.raw`(?:ONLINE )?BILL ?PAY(?:MENT)?(?: TO)?|ONLINE PMT|WEB PMT|PREAUTHORIZED DEBIT`,
      String.raw`ONLINE(?: PURCHASE| PAYMENT| TRANSFER)?|INTL|INTERNATIONAL|PENDING|DEBIT|SALE|VISA|MASTERCARD|MC`,
      String.raw`CARD(?: ENDING(?: IN)?)? \d{4}|X{2,}\d{4}|\*{2,}\d{4}`,
      // UK: "CARD PAYMENT TO TESCO ... ON 12-03-2024"
      String.raw`(?:CARD |CONTACTLESS )?PAYMENT TO`,
      // Dates and MMDD posting dates before the merchant.
      String.raw`\d{1,2}/\d{1,2}(?:/\d{2,4})?|\d{4}-\d{2}-\d{2}|\d{1,2}\.\d{1,2}\.(?:\d{2,4})?|\d{4}(?= [A-Z])`,
      // DE, FR, ES, IT, NL, SE
      String.raw`KARTENZAHLUNG|LASTSCHRIFT|GIROCARD|ACHAT CB|CB|PAIEMENT(?: PAR)? CARTE|CARTE X?\d{4}|CARTE`,
      String.raw`PAGO(?: CON)? TARJETA|COMPRA(?: TARJ(?:ETA|\.)?)?|PAGAMENTO(?: POS)?`,
      String.raw`BEA,?(?: BETAALPAS| APPLE PAY| GOOGLE PAY)?|GEA,?(?: BETAALPAS)?`,
      String.raw`KORTK[OÖ]P(?: \d{6})?`,
    ].join('|') +
    String.raw`)(?=[\s:*,.-]|$)[\s:,.-]*`,
);

/**
 * Issuer tails and heads around the DE43 text: Fiserv-style credit union exports append
 * `Date 10/31/22 <acquirer reference> <MCC> %% Card 10 #5780`; some prepend `#<reference>`.
 */
const issuerTails = /\s*%% ?CARD \d+ #\d{4}\s*$|\bDATE \d{1,2}\/\d{1,2}\/\d{2,4}\b/g;
const referenceHead = /^#[A-Z0-9]{8,} +/;

const dates =
  /\b(?:\d{1,2}\/\d{1,2}(?:\/\d{2,4})?|\d{4}-\d{2}-\d{2}|\d{1,2}-\d{1,2}-\d{4}|\d{1,2}\.\d{1,2}\.\d{2,4})\b(?:\/\d{1,2}:\d{2})?/g;
const times = /\b(?:ORE |AT )?\d{1,2}[:.]\d{2}(?::\d{2})?\b/g;
const phones = /(?:\+\d{1,3}[ .-]?)?\(?\b\d{3}\)?[ .-]?\d{3}[ .-]?\d{4}\b|\+\d{1,3}(?:[ .-]?\d{2,4}){2,5}\b/g;
const tlds =
  'COM|NET|ORG|IO|CO\\.UK|CO|UK|DE|FR|NL|ES|IT|IE|EU|BE|AT|CH|SE|DK|NO|FI|PL|PT|CZ|SK|HU|RO|GR|LU|NZ|JP|MX|BR|APP|AI|TV|ME|US|CA|AU|FM|GG|LY|SO|TO|XYZ|SHOP|STORE|ONLINE|BIZ|INFO';
const domainish = new RegExp(
  String.raw`\b(?:HTTPS?://)?(?:WWW\.)?((?:[A-Z0-9-]+\.)+(?:${tlds}))\b(/[A-Z0-9/_.#-]*)?`,
  'g',
);
/** Host names printed in the city field: help and billing sites, not the merchant's name. */
const helpHosts = /^(?:HELP|SUPPORT|BILLING|BILL|PAY|PAYMENTS|ACCOUNT|ACCOUNTS|G|CUSTOMER|SERVICE)\./;
/** Where DE43's merchant-name field ends (Mastercard 22, Visa 25 characters). */
const NAME_FIELD = 25;
const storeNumbers =
  /(?:\b(?:STORE|STR|STO|SHOP|UNIT|LOC|LOCATION|NO|NR|NUM|FILIALE|MAGASIN)\.? ?[#:]? ?[A-Z]{0,3}\d+[A-Z0-9]*\b|#\s?\d+\b|\b[A-Z]-\d{3,}\b|\bPAS\d{3}\b)/g;
/** Card-number and reference tails some issuers append: `S464071234567890 CARD 1234`, `5402XXXXXXXX1234`. */
const cardTails = /\b(?:CARD(?: ENDING(?: IN)?)? \d{4}|X{2,}\d{4}|\d{4,6}X{4,}\d{4}|S\d{10,})\b/g;

const cardTailsDatesTimes = new RegExp(`${cardTails.source}|${dates.source}|${times.source}`, 'g');

const countryCodes = new Set(
  (
    'US USA CA CAN GB GBR UK IE IRL DE DEU FR FRA NL NLD BE BEL LU LUX ES ESP IT ITA PT PRT AT AUT CH CHE ' +
    'SE SWE DK DNK NO NOR FI FIN PL POL CZ CZE IS ISL AU AUS NZ NZL MX MEX SG SGP HK HKG JP JPN IN IND BR BRA ' +
    'GR GRC HU HUN RO ROU EE EST LV LVA LT LTU SK SVK SI SVN HR HRV BG BGR MT MLT CY CYP'
  ).split(' '),
);
const regionCodes = new Set(
  (
    'AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH ' +
    'OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC PR AB BC MB NB NL NS NT NU ON PE QC SK YT'
  ).split(' '),
);
/** First words of multi-word city names, dropped with the city ("LOS GATOS", "SAN JOSE"). */
const cityPrefixes = new Set(
  'SAN SANTA LOS LAS NEW SAINT ST FORT FT EL LA SALT PALO MOUNTAIN NORTH SOUTH EAST WEST PORT GRAND BATON COLLEGE PALM'.split(
    ' ',
  ),
);

/**
 * Canonical tokens of any text, used alike for registry aliases and statement lines: upper case,
 * no diacritics, `NETFLIX.COM` -> `NETFLIX`, punctuation dropped (`MCDONALD'S` -> `MCDONALDS`).
 */
const tldSuffix = new RegExp(String.raw`\.(?:${tlds})\b`, 'g');
const nonAscii = /[^\x20-\x7e]/;
const apostrophes = /['’`´.]/;
const apostrophesAll = /['’`´.]/g;
const digit = /\d/;

export function canonicalTokens(text: string): string[] {
  let upper = text.toUpperCase();
  if (nonAscii.test(upper)) {
    upper = upper
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/ß/g, 'SS');
  }
  // Each pass is skipped when the character it needs is absent (most lines have no dot or quote).
  if (upper.includes('.')) upper = upper.replace(tldSuffix, ' ');
  if (apostrophes.test(upper)) upper = upper.replace(apostrophesAll, '');
  return upper.split(/[^A-Z0-9&]+/).filter((t) => t !== '' && t !== '&');
}

/**
 * The fields of ACH and bill-pay lines as banks export them: `COMCAST DES:CABLE ID:0412 INDN:JANE DOE
 * CO ID:1234 PPD` (Bank of America), `ORIG CO NAME:NETFLIX ORIG ID:... CO ENTRY DESCR:... IND NAME:...`
 * (Chase, Wells Fargo), `TYPE: ONLINE PMT ID: 0412 CO: VERIZON WIRELESS` (bill pay).
 */
const exportField =
  /(?:^|\s)(ORIG CO NAME|CO NAME|CO ENTRY DESCR|ENTRY DESCR|DESC DATE|ORIG ID|CO ID|IND ID|IND NAME|INDN|DES|ID|TYPE|CO|NAME|SEC|TRACE ?#|TRN|EED|PPD ID|WEB ID|CCD ID|CONF(?:IRMATION)? ?#)\s*:\s*/g;
/** Fields only bank exports have: a line with none of them is not read as one. */
const exportMarker =
  /(?:^|\s)(?:ORIG CO NAME|CO NAME|DES|INDN|IND NAME|CO ID|CO|TYPE|PPD ID|WEB ID|CCD ID)\s*:/;
/** Fields that name the company, best first. A person's name (`INDN`, `IND NAME`) never is the merchant. */
const companyFields = ['ORIG CO NAME', 'CO NAME', 'CO', 'NAME'];

/** The merchant part of an ACH or bill-pay export line; any other line as it is. */
export function bankExportMerchant(line: string): string {
  if (!exportMarker.test(line)) return line;
  const fields = new Map<string, string>();
  let head = '';
  let field: string | null = null;
  let from = 0;
  for (const m of line.matchAll(exportField)) {
    const value = line.slice(from, m.index).trim();
    if (field === null) head = value;
    else if (!fields.has(field)) fields.set(field, value);
    field = (m[1] as string).replace(/\s+/g, ' ');
    from = (m.index as number) + m[0].length;
  }
  if (field !== null && !fields.has(field)) fields.set(field, line.slice(from).trim());
  for (const name of companyFields) {
    const value = fields.get(name);
    if (value) return value;
  }
  // BofA's form: the company comes first, its fields after.
  return head || line;
}

function digitCount(token: string): number {
  let digits = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
  }
  return digits;
}
/** A name with a reference glued on: `AIR0012345678901`, `EASYJET000K1ABCDE`, `BESTBUYCOM806123456`. */
const gluedReference = /^([A-Z&]{3,})\d{3,}[A-Z0-9]*$/;

/**
 * The country and region codes at the end of a line's tokens, taken off them; `keep` tokens always
 * stay (the merchant's name).
 */
function trailingLocation(
  tokens: string[],
  line: string,
  keep: number,
): { tokens: string[]; country: string | null; region: string | null; hadLocation: boolean } {
  let hadLocation = false;
  let country: string | null = null;
  let region: string | null = null;
  // A last code that is both a state and a country (CA, DE, IN) is a state on a US statement line,
  // unless the line writes it as a country (`MUENCHEN/DE`). NL is the Netherlands: Newfoundland's
  // code is the only province code that is also a country's, and Dutch lines far outnumber its own.
  const last = tokens.at(-1) as string;
  const stateFirst = regionCodes.has(last) && last !== 'NL' && !line.trimEnd().endsWith(`/${last}`);
  if (tokens.length > keep && countryCodes.has(last) && !stateFirst) {
    country = alpha2(last);
    tokens = tokens.slice(0, -1);
    hadLocation = true;
  }
  if (tokens.length > keep && regionCodes.has(tokens.at(-1) as string)) {
    region = tokens.at(-1) as string;
    tokens = tokens.slice(0, -1);
    hadLocation = true;
    // Two letters after a city are a state when nothing says otherwise (CA = California, not Canada).
    if (country === null || country === 'US' || country === 'CA') {
      country = canadianProvinces.has(region) ? 'CA' : 'US';
    }
  }
  return { tokens, country, region, hadLocation };
}

export function normalizeDescriptor(raw: string): NormalizedDescriptor {
  let line = nonAscii.test(raw) ? raw.normalize('NFKC') : raw;
  // \p{Cc}: control characters (tabs, NULs) from CSV exports.
  line = line
    .toUpperCase()
    .replace(/[\p{Cc}\s]+/gu, ' ')
    .trim();

  // The passes below that need a character the line does not have are skipped: each costs a scan.
  if (line.includes(':')) line = bankExportMerchant(line);
  if (line.includes('%') || line.includes('DATE ')) line = line.replace(issuerTails, ' ');
  if (line.startsWith('#')) line = line.replace(referenceHead, '');
  line = line.trim();
  for (let previous = ''; previous !== line; ) {
    previous = line;
    line = line.replace(issuerNoise, '').trim();
  }

  const detected = detectProcessor(line);
  const processor = detected?.processor ?? null;
  if (detected) line = detected.rest;

  // For card-not-present charges the city field holds a phone number or a URL; then no city remains.
  let cityFieldSeen = false;
  let phone: string | null = null;
  // Card tails, dates, times, phone numbers and store numbers all hold a digit.
  const digits = digit.test(line);
  if (digits) {
    line = line.replace(cardTailsDatesTimes, ' ').replace(phones, (match) => {
      cityFieldSeen = true;
      phone ??= phoneOf(match);
      return ' ';
    });
  }
  line = line.trim();

  // A domain at the start names the merchant (NETFLIX.COM); elsewhere it is the city field.
  const domains: string[] = [];
  if (line.includes('.'))
    line = line.replace(domainish, (_match, host: string, urlPath: string | undefined, offset: number) => {
      const registrable = getDomain(host.toLowerCase());
      if (registrable && !domains.includes(registrable)) domains.push(registrable);
      // In the name field a domain is the merchant's name (NETFLIX.COM, JUST EAT.CO.UK); a help or
      // billing address (HELP.UBER.COM, AMZN.COM/BILL) is the city field.
      if (offset === 0 || (offset < NAME_FIELD && !urlPath && !helpHosts.test(host))) return ` ${host} `;
      cityFieldSeen = true;
      return ' ';
    });

  if (digits) line = line.replace(storeNumbers, ' ');
  // Stripe-style `PREFIX* SUFFIX` and `*REFERENCE` tails: the star only separates.
  if (line.includes('*')) line = line.replace(/\*/g, ' ');

  // References and store numbers: letters mixed with 3+ digits anywhere, 3+ digit numbers after the
  // first token (a leading number can be the name: "365 BY WHOLE FOODS").
  let tokens = canonicalTokens(line)
    .map((token) => gluedReference.exec(token)?.[1] ?? token)
    .filter((token, i) => {
      if (digitCount(token) < 3) return true;
      return i === 0 && /^\d+$/.test(token);
    });
  while (tokens.length > 1 && /^\d+$/.test(tokens.at(-1) as string)) tokens.pop();

  // After a processor prefix the merchant may be absent (APPLE.COM/BILL CA): location codes can go entirely.
  const location = trailingLocation(tokens, line, processor ? 0 : 1);
  tokens = location.tokens;
  const { country, region, hadLocation } = location;

  let merchantTokens = tokens;
  let city: string | null = null;
  // After a country code alone, the word before it may be the name's own (`SKY DIGITAL ... GB`,
  // `DUTCH BROS COFFEE GR`) or a domain's label the line printed (`AMZNMktplace amazon.co.uk LU`).
  const before = tokens.at(-1) ?? '';
  const cityBefore = region !== null || (!notCityWords.has(before) && !labelOf(before, domains));
  if (hadLocation && !cityFieldSeen && tokens.length > 1 && cityBefore) {
    merchantTokens = tokens.slice(0, -1);
    if (merchantTokens.length > 1 && cityPrefixes.has(merchantTokens.at(-1) as string)) {
      merchantTokens = merchantTokens.slice(0, -1);
    }
    city = tokens.slice(merchantTokens.length).join(' ');
  }

  // A city printed twice, in the store's name and the city field (`JUMBO UTRECHT ... UTRECHT`).
  if (city === null && merchantTokens.length > 2) {
    const tail = merchantTokens.at(-1) as string;
    const first = merchantTokens.indexOf(tail);
    if (tail.length > 3 && !digit.test(tail) && first > 0 && first < merchantTokens.length - 1) {
      merchantTokens = merchantTokens.slice(0, -1);
      city = tail;
    }
  }

  const prefixTokens = detected ? canonicalTokens(detected.prefix.replace(/\*/g, ' ')) : [];
  return {
    normalized: merchantTokens.join(' '),
    tokens,
    merchantTokens,
    processor,
    prefixTokens,
    domains,
    city,
    region,
    country,
    phone,
  };
}

/** Words that end a business's name, never a city's: legal, trade and product words. */
const notCityWords = new Set(
  (
    'INC LLC LTD LIMITED CO CORP GMBH AG SA SAS SARL SRL SPA BV NV PLC PTY AB OY UAB SRO COFFEE CAFE ' +
    'RESTAURANT BAR GRILL PIZZA BAKERY SHOP STORE STORES MARKET DIGITAL MEDIA ONLINE WEB COM NET APP ' +
    'MEMBERSHIP SUBSCRIPTION RENEWAL SERVICES SERVICE INTERNATIONAL INTL GROUP'
  ).split(' '),
);

/** Is `token` the label of a domain the line printed (`AMAZON` of amazon.co.uk)? */
const labelOf = (token: string, domains: readonly string[]): boolean =>
  domains.some((d) => {
    const label = d.split('.')[0]?.toUpperCase().replace(/-/g, '') ?? '';
    return label.length >= 3 && token.endsWith(label);
  });

const canadianProvinces = new Set('AB BC MB NB NL NS NT NU ON PE QC SK YT'.split(' '));
const alpha3: Record<string, string> = {
  USA: 'US',
  CAN: 'CA',
  GBR: 'GB',
  UK: 'GB',
  IRL: 'IE',
  DEU: 'DE',
  FRA: 'FR',
  NLD: 'NL',
  BEL: 'BE',
  LUX: 'LU',
  ESP: 'ES',
  ITA: 'IT',
  PRT: 'PT',
  AUT: 'AT',
  CHE: 'CH',
  SWE: 'SE',
  DNK: 'DK',
  NOR: 'NO',
  FIN: 'FI',
  POL: 'PL',
  CZE: 'CZ',
  ISL: 'IS',
  AUS: 'AU',
  NZL: 'NZ',
  MEX: 'MX',
  SGP: 'SG',
  HKG: 'HK',
  JPN: 'JP',
  IND: 'IN',
  BRA: 'BR',
  GRC: 'GR',
  HUN: 'HU',
  ROU: 'RO',
  EST: 'EE',
  LVA: 'LV',
  LTU: 'LT',
  SVK: 'SK',
  SVN: 'SI',
  HRV: 'HR',
  BGR: 'BG',
  MLT: 'MT',
  CYP: 'CY',
};
function alpha2(code: string): string {
  return alpha3[code] ?? code;
}

/** A printed phone number as E.164 (NANP when it has no country code), or its digits. */
function phoneOf(printed: string): string {
  const parsed = parsePhoneNumberFromString(printed, 'US');
  if (parsed?.isValid()) return parsed.number;
  return printed.replace(/[^\d+]/g, '');
}
