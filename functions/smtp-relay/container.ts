/**
 * PLACEHOLDER, on the AWS branch only: the relay's container program is written by the relay's
 * branch (this same path there: the relay from its environment, its health server, SIGTERM → drain).
 * This stands in so that `cdk synth` can stage the image and its tests bundle something; the merge
 * keeps the relay branch's file, not this one.
 */
import { createServer } from 'node:http';
import { CONTAINER_PORTS } from './settings.js';

const port = Number(process.env.SMTP_RELAY_HEALTH_PORT ?? CONTAINER_PORTS.health);
const health = createServer((_request, response) => {
  response.writeHead(503).end('placeholder: the relay is not built on this branch');
});
health.listen(port);
process.once('SIGTERM', () => health.close(() => process.exit(0)));
