/**
 * Contact forms: a page holding a `<form>` a person writes a message in - a `<textarea>`, or an
 * email field among at least three text fields - and that is not a search, sign-in or newsletter
 * form (a search role or field, a password field, an email field with a name or alone). The channel is the page,
 * which the person opens; nothing is submitted.
 */
import type { HtmlPage } from './pages.ts';
import type { FoundChannel } from './schemas.ts';

export function contactForm(page: HtmlPage): FoundChannel | null {
  let found = false;
  page.$('form').each((_, el) => {
    const form = page.$(el);
    if (
      form.attr('role') === 'search' ||
      form.find('input[type="search" i], input[type="password" i]').length
    )
      return;
    const textInputs = form.find(
      'input:not([type]), input[type="text" i], input[type="email" i], input[type="tel" i]',
    ).length;
    const message = form.find('textarea').length > 0;
    const email = form.find('input[type="email" i]').length > 0;
    if (message || (email && textInputs >= 3)) {
      found = true;
      return false;
    }
    return;
  });
  return found
    ? {
        kind: 'form',
        address: page.url.href,
        detail: {},
        source_url: page.url.href,
        found_by: 'contact_form',
      }
    : null;
}
