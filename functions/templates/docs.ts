import { LIST, page, ref, removed, T0, T1, TEMPLATE_ID } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import { MAX_TEMPLATE_VARIABLES } from './render.js';
import type { TEMPLATE_ROUTES } from './routes.js';

/** The templates' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const templateExample = {
  object: 'template',
  id: TEMPLATE_ID,
  current_version_id: 'tplv_01m80j0d4s8x2f7gkbq3n5w9re',
  name: 'Welcome',
  alias: 'welcome',
  from: 'Acme <hello@acme.test>',
  subject: 'Welcome, {{{NAME}}}',
  reply_to: null,
  html: '<p>Hello {{{NAME}}}</p>',
  text: 'Hello {{{NAME}}}',
  variables: [
    {
      id: 'tvar_01m80hz2b7ed3s6h0c9yb1q4tn',
      key: 'NAME',
      type: 'string',
      fallback_value: 'there',
      created_at: T0,
      updated_at: T0,
    },
  ],
  created_at: T0,
  updated_at: T1,
  status: 'published',
  published_at: T1,
  has_unpublished_versions: false,
};

export const TEMPLATE_DOCS: DocsOf<typeof TEMPLATE_ROUTES> = {
  'create-template': {
    ok: 'Created, as a draft.',
    example: ref('template', TEMPLATE_ID),
    requestExample: {
      name: 'Welcome',
      alias: 'welcome',
      from: 'Acme <hello@acme.test>',
      subject: 'Welcome, {{{NAME}}}',
      html: '<p>Hello {{{NAME}}}</p>',
      variables: [{ key: 'NAME', type: 'string', fallback_value: 'there' }],
    },
    description: `Variables are \`{{{NAME}}}\`, each declared (at most ${MAX_TEMPLATE_VARIABLES}). 409 when the alias is taken.`,
  },
  'list-templates': {
    ok: 'A page of templates.',
    example: page([
      {
        id: TEMPLATE_ID,
        name: 'Welcome',
        status: 'published',
        published_at: T1,
        alias: 'welcome',
        created_at: T0,
        updated_at: T1,
      },
    ]),
    description: LIST,
  },
  'get-template': {
    ok: 'The template, its current version.',
    example: templateExample,
  },
  'update-template': {
    ok: 'Changed: a new current version (sends use the published one until the next publish).',
    example: ref('template', TEMPLATE_ID),
    requestExample: { subject: 'Welcome aboard, {{{NAME}}}' },
    description:
      'What is left out stays; null removes an optional part. 409 when the alias is taken or other requests change it at the same time.',
  },
  'delete-template': {
    ok: 'Removed: gone for new sends; emails accepted keep what was rendered.',
    example: removed('template', TEMPLATE_ID),
  },
  'publish-template': {
    ok: 'Published: sends use this version from now on.',
    example: ref('template', TEMPLATE_ID),
  },
  'duplicate-template': {
    ok: 'The copy, a new draft.',
    example: ref('template', 'tpl_01m80r5j9d2q7e4xk0bw6n3cyf'),
  },
};
