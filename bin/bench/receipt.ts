/**
 * The email the benchmark sends: an order receipt as transactional email looks in practice, a
 * table layout with inline styles (about 7 KB of HTML and a 1 KB text part), each one its own
 * order number, items and prices. Its HTML deflates about 5 times, as such emails do; a body
 * that repeats one sentence would flatter every per-byte cost.
 */
const ITEMS = [
  'Merino wool crew sweater',
  'Organic cotton t-shirt, 3-pack',
  'Waxed canvas weekender bag',
  'Leather card holder',
  'Trail running socks',
  'Stainless steel water bottle, 750 ml',
  'Linen pillowcases (pair)',
  'Ceramic pour-over coffee set',
];

const cell =
  'padding:12px 16px;border-bottom:1px solid #eceff3;font-family:Helvetica,Arial,sans-serif;font-size:14px;color:#1f2933;';

export function receipt(i: number) {
  const order = 100_000 + i;
  const lines = Array.from({ length: 3 + (i % 4) }, (_, k) => {
    const name = ITEMS[(i + k * 3) % ITEMS.length] as string;
    const quantity = 1 + ((i + k) % 3);
    const price = 9.5 + ((i * 7 + k * 13) % 120);
    return { name, quantity, price };
  });
  const total = lines.reduce((sum, l) => sum + l.quantity * l.price, 0);
  const rows = lines
    .map(
      (l) =>
        `<tr><td style="${cell}">${l.name}<br><span style="color:#7b8794;font-size:12px">SKU ${(order * 31 + l.price * 100).toString(36).toUpperCase()}</span></td><td style="${cell}text-align:center">${l.quantity}</td><td style="${cell}text-align:right">$${(l.quantity * l.price).toFixed(2)}</td></tr>`,
    )
    .join('\n');
  const html = `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Your Acme receipt #${order}</title></head>
<body style="margin:0;padding:0;background:#f5f7fa">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f5f7fa"><tr><td align="center" style="padding:32px 12px">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" style="max-width:600px;background:#ffffff;border-radius:8px;overflow:hidden">
<tr><td style="padding:28px 32px;background:#111827;font-family:Helvetica,Arial,sans-serif;font-size:20px;font-weight:bold;color:#ffffff">Acme Outfitters</td></tr>
<tr><td style="padding:28px 32px 8px;font-family:Helvetica,Arial,sans-serif;font-size:16px;line-height:24px;color:#1f2933">Hi Jordan,<br><br>Thanks for your order! We are getting it ready and will send you a tracking link as soon as it ships. Here is your receipt for order <strong>#${order}</strong>, placed on November ${1 + (i % 28)}, 2026.</td></tr>
<tr><td style="padding:16px 32px"><table role="presentation" width="100%" cellpadding="0" cellspacing="0">
<tr><th align="left" style="${cell}font-weight:bold;color:#52606d">Item</th><th style="${cell}font-weight:bold;color:#52606d">Qty</th><th align="right" style="${cell}font-weight:bold;color:#52606d">Price</th></tr>
${rows}
<tr><td style="${cell}font-weight:bold" colspan="2">Shipping (standard, 3–5 business days)</td><td style="${cell}text-align:right">$${(i % 2 ? 0 : 6.95).toFixed(2)}</td></tr>
<tr><td style="${cell}font-weight:bold" colspan="2">Total charged to Visa ending ${1000 + (i % 9000)}</td><td style="${cell}text-align:right;font-weight:bold">$${total.toFixed(2)}</td></tr>
</table></td></tr>
<tr><td style="padding:8px 32px 24px;font-family:Helvetica,Arial,sans-serif;font-size:14px;line-height:22px;color:#52606d"><strong>Shipping to</strong><br>Jordan Rivera<br>${100 + (i % 800)} Market Street, Apt ${1 + (i % 40)}<br>San Francisco, CA 94103<br>United States</td></tr>
<tr><td align="center" style="padding:8px 32px 32px"><a href="https://acme.example/orders/${order}?utm_source=receipt&amp;utm_medium=email" style="display:inline-block;padding:12px 28px;background:#2563eb;border-radius:6px;font-family:Helvetica,Arial,sans-serif;font-size:15px;font-weight:bold;color:#ffffff;text-decoration:none">View your order</a></td></tr>
<tr><td style="padding:20px 32px;background:#f5f7fa;font-family:Helvetica,Arial,sans-serif;font-size:12px;line-height:18px;color:#7b8794">Questions? Reply to this email or visit <a href="https://acme.example/help" style="color:#2563eb">acme.example/help</a>. You can return unworn items within 30 days for a full refund.<br><br>Acme Outfitters, Inc. · 500 Howard Street · San Francisco, CA 94105<br>You received this email because you placed an order at acme.example. <a href="https://acme.example/preferences?u=${(order * 7919).toString(36)}" style="color:#7b8794">Email preferences</a></td></tr>
</table></td></tr></table></body></html>`;
  const text = [
    'Hi Jordan,',
    '',
    `Thanks for your order! Here is your receipt for order #${order}.`,
    '',
    ...lines.map((l) => `${l.name} x${l.quantity}  $${(l.quantity * l.price).toFixed(2)}`),
    `Total: $${total.toFixed(2)}`,
    '',
    'Shipping to: Jordan Rivera, San Francisco, CA 94103',
    `View your order: https://acme.example/orders/${order}`,
    '',
    'Questions? Reply to this email or visit https://acme.example/help',
  ].join('\n');
  return {
    from: 'Acme <orders@acme.test>',
    to: 'success@simulator.amazonses.com',
    subject: `Your Acme receipt #${order}`,
    html,
    text,
  };
}
