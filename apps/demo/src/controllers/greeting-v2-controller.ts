import { Response, SocketController, type Request } from '@pkg/core';
import { HttpRoute } from '@pkg/decorators';

/** Greeting per language code understood by v2. */
export const GREETINGS: Readonly<Record<string, string>> = Object.freeze({
  en: 'Hello',
  fr: 'Bonjour',
  de: 'Hallo',
  es: 'Hola',
});

/**
 * Version 2 of the greeting API, served by its own controller: a nested document and a
 * `?lang=` query parameter (default `en`). An unknown language is a 400.
 */
export class GreetingV2Controller extends SocketController {
  @HttpRoute('GET', '/api/v2/greeting/{name}')
  greet(request: Request): Response {
    const name = String(request.getParam('name', ''));
    const rawLang: unknown = request.getQuery('lang', 'en');
    const lang = typeof rawLang === 'string' ? rawLang.toLowerCase() : '';
    const word = Object.hasOwn(GREETINGS, lang) ? GREETINGS[lang] : undefined;
    if (word === undefined) {
      return Response.json(
        { error: `Unknown "lang"; use one of ${Object.keys(GREETINGS).join(', ')}.` },
        400,
      );
    }
    return Response.json({ version: 2, greeting: { text: `${word}, ${name}!`, name, lang } });
  }
}
