import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sesAllows } from '../functions/catalog.js';
import { CALLER_HEADER } from './caller-identity.js';

/**
 * SES's receipt rules, locally: the v1 API's receipt-rule calls the service makes (its adapter,
 * functions/adapters/ses/receipt-rules.ts, and the receiving custom resource), answered as SES
 * answers them. SES v1 speaks the awsQuery protocol: `POST /`, a form-encoded body
 * (`Action=CreateReceiptRule&Version=2010-12-01&Rule.Recipients.member.1=…`), XML answers
 * (`<ActionResponse><ActionResult>…`) and errors (`<ErrorResponse><Error><Code>…`), 400 for
 * SES's own errors (RuleSetDoesNotExist, RuleDoesNotExist, AlreadyExists, CannotDelete,
 * LimitExceeded) and 403 AccessDenied for a function whose role lacks the action, as the v2 calls
 * (local/caller-identity.ts). Kept in memory: the local start sets receiving up and asks for a sync
 * each time, so the writer makes the rules again.
 *
 * `acceptsRecipient` is SES's decision during the SMTP conversation: mail to an address is taken
 * only where an enabled rule of the ACTIVE set matches it.
 */
const NS = 'http://ses.amazonaws.com/doc/2010-12-01/';
/** SES's quotas ("Email receiving quotas"): 200 rules a set, 40 sets an account, 500 recipients a rule. */
const MAX_RULES = 200;
const MAX_SETS = 40;
const MAX_RECIPIENTS = 500;

type Value = string | boolean | Value[] | { [key: string]: Value };
type Rule = { Name: string; Enabled?: boolean; Recipients?: string[] } & Record<string, Value | undefined>;
type Answer = { status: number; xml: string };

class SesError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** A form's flattened keys (`Rule.Actions.member.1.S3Action.BucketName`) as the nested value they name. */
export function parseQuery(body: string): Record<string, Value> {
  const root: Record<string, Value> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.split('.');
    let node: Record<string, Value> | Value[] = root;
    for (let i = 0; i < path.length; i++) {
      const part = path[i] as string;
      if (part === 'member') continue;
      const last = i === path.length - 1;
      const index = Array.isArray(node) ? Number(part) - 1 : part;
      const holder = node as Record<string | number, Value>;
      if (last) holder[index] = value;
      else holder[index] ??= path[i + 1] === 'member' ? [] : {};
      node = holder[index] as Record<string, Value> | Value[];
    }
  }
  return root;
}

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A value in awsQuery's XML: lists as `<member>`s. */
function toXml(value: Value | undefined): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.map((item) => `<member>${toXml(item)}</member>`).join('');
  if (typeof value === 'object')
    return Object.entries(value)
      .map(([key, item]) => (item === undefined ? '' : `<${key}>${toXml(item)}</${key}>`))
      .join('');
  return escapeXml(String(value));
}

/** The form's booleans arrive as text; the rule is kept as SES returns it. */
function ruleOf(input: Value | undefined): Rule {
  const rule = (input ?? {}) as Record<string, Value>;
  if (typeof rule.Name !== 'string' || !/^[A-Za-z0-9](?:[\w.-]{0,62}[A-Za-z0-9])?$/.test(rule.Name))
    throw new SesError('InvalidParameterValue', `Invalid rule name: ${String(rule.Name)}`);
  const recipients = (rule.Recipients ?? []) as string[];
  if (recipients.length > MAX_RECIPIENTS)
    throw new SesError('LimitExceeded', `A rule may have at most ${MAX_RECIPIENTS} recipients.`);
  const flag = (key: string) => (rule[key] === undefined ? undefined : rule[key] === 'true');
  return {
    ...rule,
    Name: rule.Name,
    Enabled: flag('Enabled') ?? false,
    ScanEnabled: flag('ScanEnabled') ?? false,
    TlsPolicy: (rule.TlsPolicy as string | undefined) ?? 'Optional',
    ...(recipients.length ? { Recipients: recipients } : { Recipients: undefined }),
  } as Rule;
}

/** Whether a rule's recipient (an address, a domain, or `.domain` for its subdomains) matches. */
export function recipientMatches(recipient: string, address: string): boolean {
  const want = recipient.toLowerCase();
  const to = address.toLowerCase();
  const domain = to.slice(to.lastIndexOf('@') + 1);
  if (want.includes('@')) return want === to;
  if (want.startsWith('.')) return domain.endsWith(want);
  return domain === want;
}

export class LocalReceiptRules {
  private readonly sets = new Map<string, { created: Date; rules: Rule[] }>();
  private active: string | undefined;

  /** `verifiedDomain`: a rule without recipients matches every address at a verified domain, as on SES. */
  constructor(private readonly verifiedDomain: (domain: string) => boolean = () => false) {}

  /** Whether SES would take mail for this address now (an enabled rule of the active set matches it). */
  acceptsRecipient(address: string): boolean {
    const rules = this.active ? (this.sets.get(this.active)?.rules ?? []) : [];
    const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
    return rules.some(
      (rule) =>
        rule.Enabled === true &&
        (rule.Recipients?.length
          ? rule.Recipients.some((recipient) => recipientMatches(recipient, address))
          : this.verifiedDomain(domain)),
    );
  }

  /** Answers an awsQuery request (POST / with an Action); false for any other request. */
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer): boolean {
    if (req.method !== 'POST' || (req.url ?? '/').split('?')[0] !== '/') return false;
    const input = parseQuery(body.toString('utf8'));
    const action = input.Action;
    if (typeof action !== 'string') return false;
    const caller = req.headers[CALLER_HEADER];
    const answer = !sesAllows(typeof caller === 'string' ? caller : undefined, action)
      ? failure(
          new SesError(
            'AccessDenied',
            `User: arn:aws:sts::000000000000:assumed-role/${String(caller)}/${String(caller)} is not authorized to perform: ses:${action} because no identity-based policy allows the ses:${action} action`,
            403,
          ),
        )
      : this.answer(action, input);
    res.writeHead(answer.status, { 'content-type': 'text/xml' });
    res.end(answer.xml);
    return true;
  }

  private answer(action: string, input: Record<string, Value>): Answer {
    try {
      const result = this.run(action, input);
      return {
        status: 200,
        xml: `<${action}Response xmlns="${NS}"><${action}Result>${toXml(result)}</${action}Result><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></${action}Response>`,
      };
    } catch (error) {
      if (error instanceof SesError) return failure(error);
      throw error;
    }
  }

  private set(name: Value | undefined) {
    const set = typeof name === 'string' ? this.sets.get(name) : undefined;
    if (!set) throw new SesError('RuleSetDoesNotExist', `Rule set does not exist: ${String(name)}`);
    return set;
  }

  private described(name: string): Record<string, Value> {
    const set = this.set(name);
    return {
      Metadata: { Name: name, CreatedTimestamp: set.created.toISOString() },
      Rules: set.rules.map((rule) => structuredClone(rule) as Record<string, Value>),
    };
  }

  private run(action: string, input: Record<string, Value>): Record<string, Value> {
    const setName = input.RuleSetName;
    switch (action) {
      case 'DescribeActiveReceiptRuleSet':
        return this.active ? this.described(this.active) : {};
      case 'DescribeReceiptRuleSet':
        return this.described(String(setName));
      case 'CreateReceiptRuleSet': {
        if (typeof setName !== 'string' || !setName)
          throw new SesError('InvalidParameterValue', 'RuleSetName is required.');
        if (this.sets.has(setName))
          throw new SesError('AlreadyExists', `Rule set already exists: ${setName}`);
        if (this.sets.size >= MAX_SETS) throw new SesError('LimitExceeded', 'Maximum rule sets exceeded.');
        this.sets.set(setName, { created: new Date(), rules: [] });
        return {};
      }
      case 'SetActiveReceiptRuleSet':
        // Without a name: none active, and no mail received.
        if (setName !== undefined) this.set(setName);
        this.active = setName === undefined ? undefined : String(setName);
        return {};
      case 'DeleteReceiptRuleSet':
        if (setName === this.active)
          throw new SesError('CannotDelete', `Cannot delete active rule set: ${String(setName)}`);
        this.sets.delete(String(setName));
        return {};
      case 'CreateReceiptRule': {
        const { rules } = this.set(setName);
        const rule = ruleOf(input.Rule);
        if (rules.some((r) => r.Name === rule.Name))
          throw new SesError('AlreadyExists', `Rule already exists: ${rule.Name}`);
        if (rules.length >= MAX_RULES) throw new SesError('LimitExceeded', 'Maximum rules exceeded.');
        const after = input.After;
        const at = typeof after === 'string' && after ? rules.findIndex((r) => r.Name === after) : -1;
        if (typeof after === 'string' && after && at < 0)
          throw new SesError('RuleDoesNotExist', `Rule does not exist: ${after}`);
        rules.splice(at + 1, 0, rule);
        return {};
      }
      case 'UpdateReceiptRule': {
        const { rules } = this.set(setName);
        const rule = ruleOf(input.Rule);
        const at = rules.findIndex((r) => r.Name === rule.Name);
        if (at < 0) throw new SesError('RuleDoesNotExist', `Rule does not exist: ${rule.Name}`);
        rules[at] = rule;
        return {};
      }
      case 'DeleteReceiptRule': {
        const set = this.set(setName);
        set.rules = set.rules.filter((r) => r.Name !== input.RuleName);
        return {};
      }
      default:
        throw new SesError('InvalidAction', `The action ${action} is not valid for this endpoint.`);
    }
  }
}

function failure(error: SesError): Answer {
  return {
    status: error.status,
    xml: `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${error.code}</Code><Message>${escapeXml(error.message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
  };
}
