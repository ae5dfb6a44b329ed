import type { ProviderKind, Surface, UpstreamTarget } from '@guard/domain';

/** The provider whose wire each endpoint family speaks: requests go there, unchanged in shape. */
export const PROVIDER_OF_SURFACE: Record<Surface, ProviderKind> = {
  chat: 'openai',
  responses: 'openai',
  messages: 'anthropic',
  gemini: 'gemini',
};

/** The vendors' public API base URLs, as their SDKs take them. */
export const DEFAULT_BASE_URLS: Record<ProviderKind, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
};

export interface ProviderSettings {
  baseUrl: string;
  apiKey: string | null;
}

/** One entry of the routing file: models whose name matches go to this base URL with this key. */
export interface UpstreamRoute {
  /** A model name, or a pattern where `*` stands for any characters (`gpt-4o*`, `*`). */
  model: string;
  provider: ProviderKind;
  baseUrl: string;
  apiKey: string | null;
}

export interface UpstreamRouting {
  providers: Record<ProviderKind, ProviderSettings>;
  routes: UpstreamRoute[];
}

function patternToRegExp(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*');
  return new RegExp(`^${escaped}$`);
}

/**
 * Chooses where a call goes: the first route of the routing file whose pattern matches the model
 * and whose provider speaks the endpoint's wire, else the provider's settings. A key in the
 * request header `x-upstream-api-key` replaces the configured one.
 */
export function createUpstreamResolver(routing: UpstreamRouting) {
  const compiled = routing.routes.map((r) => ({ ...r, re: patternToRegExp(r.model) }));
  return (surface: Surface, model: string, requestKey: string | undefined): UpstreamTarget => {
    const provider = PROVIDER_OF_SURFACE[surface];
    const route = compiled.find((r) => r.provider === provider && r.re.test(model));
    const settings = route ?? routing.providers[provider];
    return {
      provider,
      baseUrl: settings.baseUrl,
      apiKey: requestKey ?? settings.apiKey,
    };
  };
}
export type UpstreamResolver = ReturnType<typeof createUpstreamResolver>;
