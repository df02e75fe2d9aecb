import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stage } from 'aws-cdk-lib';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import { ContainerImage, CpuArchitecture } from 'aws-cdk-lib/aws-ecs';
import type { Construct } from 'constructs';
import { CONTAINER_PORTS } from '../functions/smtp-relay/settings.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The relay's container program: the relay started from its environment (SIGTERM drains it). */
export const RELAY_PROGRAM = 'functions/containers/smtp-relay.ts';

/**
 * ARM64 (Graviton): Fargate's price for it is about 20 % below x86's ($0.03238 against $0.04048 per
 * vCPU-hour in us-east-1), as the functions run on it. The image runs no build step (below), so a
 * machine of either architecture builds it without emulation.
 */
export const RELAY_ARCHITECTURE = { cpu: CpuArchitecture.ARM64, platform: Platform.LINUX_ARM64 } as const;

/** Node 22 (the functions' runtime), from ECR Public's mirror of Docker's official image: no Docker Hub pull limits. */
export const RELAY_BASE_IMAGE = 'public.ecr.aws/docker/library/node:22-bookworm-slim';

/**
 * The image: the base, the bundle, its unprivileged user. No RUN step: nothing of the target's
 * architecture runs while it is built, so building the ARM64 image on an x86 machine needs Docker
 * (with BuildKit, the default since Docker 23) and no QEMU.
 */
export const RELAY_DOCKERFILE = `# The SMTP relay (lib/smtp-relay-image.ts): staged by cdk synth, built by cdk deploy.
FROM ${RELAY_BASE_IMAGE}
WORKDIR /relay
COPY index.mjs index.mjs.map ./
ENV NODE_ENV=production
EXPOSE ${CONTAINER_PORTS.secured} ${CONTAINER_PORTS.starttls} ${CONTAINER_PORTS.health}
USER node
CMD ["node", "--enable-source-maps", "index.mjs"]
`;

/** Where this synth staged the image's directory, by cloud assembly (one build per synth). */
const staged = new Map<string, string>();

/**
 * Stages the image's build directory: the Dockerfile, and the program bundled by lib/bundling.ts
 * (bin/build-smtp-relay.ts, in a child process: constructs are synchronous). Made in the cloud
 * assembly's directory and removed when the process exits; CDK copies it into the assembly as the
 * image asset, which `cdk deploy` builds with Docker. So `cdk synth` needs no Docker.
 */
export function stageRelayImage(scope: Construct): string {
  const assembly = Stage.of(scope)?.outdir;
  if (!assembly) throw new Error('The SMTP relay image is staged within a CDK app');
  const done = staged.get(assembly);
  if (done) return done;
  mkdirSync(assembly, { recursive: true });
  const dir = mkdtempSync(join(assembly, '.smtp-relay-image-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bin', 'build-smtp-relay.ts'), dir], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  writeFileSync(join(dir, 'Dockerfile'), RELAY_DOCKERFILE);
  staged.set(assembly, dir);
  return dir;
}

/** The relay's image, from the directory staged for this synth, for the relay's architecture. */
export const relayImage = (scope: Construct): ContainerImage =>
  ContainerImage.fromAsset(stageRelayImage(scope), { platform: RELAY_ARCHITECTURE.platform });
