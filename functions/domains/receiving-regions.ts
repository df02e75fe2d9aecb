/**
 * The AWS Regions where SES receives email, as AWS's "Amazon Simple Email Service endpoints and
 * quotas" page lists their inbound SMTP endpoints (https://docs.aws.amazon.com/general/latest/gr/ses.html,
 * "Email receiving endpoints"): the one place the service keeps them. In any other Region the stack
 * synthesizes no receiving resources and a domain's `capabilities.receiving: "enabled"` is refused
 * with these named. Check the page before adding one: SES receives in fewer Regions than it sends.
 */
export const RECEIVING_REGIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-2',
  'ca-central-1',
  'eu-west-1',
  'eu-west-2',
  'eu-central-1',
  'ap-southeast-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-northeast-1',
] as const;

export const receivesIn = (region: string): boolean =>
  (RECEIVING_REGIONS as readonly string[]).includes(region);

/** The host a receiving domain's MX record points at, in the stack's Region. */
export const inboundSmtpHost = (region: string): string => `inbound-smtp.${region}.amazonaws.com`;

/** SES's limit on a received message, headers included (its S3 action's; the Lambda event carries none). */
export const MAX_RECEIVED_MESSAGE_BYTES = 40 * 1024 * 1024;
