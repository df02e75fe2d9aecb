import { describe, expect, it } from 'vitest';
import { simulatedOutcome, simulateEvents } from '../../local/mailbox-simulator.js';

describe('local mailbox simulator (SES developer guide, "Using the mailbox simulator")', () => {
  it.each([
    ['success@simulator.amazonses.com', 'delivered'],
    ['bounce@simulator.amazonses.com', 'bounced'],
    ['BOUNCE+label@Simulator.AmazonSES.com', 'bounced'],
    ['Test <complaint@simulator.amazonses.com>', 'complained'],
    ['suppressionlist@simulator.amazonses.com', 'suppressed'],
    ['ooto@simulator.amazonses.com', 'out_of_office'],
    ['someone@example.com', 'delivered'],
    ['bounce@example.com', 'delivered'],
  ])('%s → %s', (address, outcome) => {
    expect(simulatedOutcome(address)).toBe(outcome);
  });

  it('publishes Send at once, then one Delivery and one Bounce listing their recipients, then the Complaint', () => {
    const events = simulateEvents({
      messageId: 'm-1',
      from: 'Acme <hello@acme.test>',
      recipients: [
        'success@simulator.amazonses.com',
        'bounce@simulator.amazonses.com',
        'complaint@simulator.amazonses.com',
      ],
      subject: 'Hi',
      tags: { email_id: ['em_01m80mv90eew9ryfvqd1ksnhes'] },
      configurationSet: 'set',
      sentAt: new Date('2026-11-22T00:00:00.000Z'),
    });
    expect(events.map((e) => e.event.eventType)).toEqual(['Send', 'Delivery', 'Bounce', 'Complaint']);
    expect(events[1]?.event.delivery?.recipients).toEqual([
      'success@simulator.amazonses.com',
      'complaint@simulator.amazonses.com',
    ]);
    expect(events[2]?.event.bounce).toMatchObject({
      bounceType: 'Permanent',
      bouncedRecipients: [{ emailAddress: 'bounce@simulator.amazonses.com' }],
    });
    expect(events[3]?.event.mail.tags).toEqual({
      'ses:configuration-set': ['set'],
      email_id: ['em_01m80mv90eew9ryfvqd1ksnhes'],
    });
    expect(events.map((e) => e.delayMs)).toEqual([0, 150, 150, 300]);
  });
});
