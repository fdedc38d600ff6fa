import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The pages under docs/ (the guide the docs site builds, and the Kubernetes and production recipes) follow the README's
 * rule: a code block after an `<!-- example: path -->` marker is that whole file, and every TypeScript block is one
 * (`npm run typecheck` compiles examples/). So every page shows exactly the module code, manifests and member
 * configuration that the repository keeps and tests. Every page counts, in every folder but the site's own
 * (.vitepress: configuration, cache, output) and what a build generates (public/api).
 */
const SKIPPED = new Set(['.vitepress', 'node_modules', 'public']);

function markdownPages(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : markdownPages(join(dir, entry.name));
    return entry.name.endsWith('.md') ? [join(dir, entry.name)] : [];
  });
}

describe('docs examples', () => {
  const root = join(__dirname, '../..');
  const pages = markdownPages(join(root, 'docs')).map((file) => relative(join(root, 'docs'), file));
  const read = (path: string) => readFileSync(join(root, path), 'utf8');
  const blocks = pages.flatMap((page) =>
    [...read(`docs/${page}`).matchAll(/<!-- example: (\S+) -->\s*```\w+\n([\s\S]*?)```/g)].map((m) => [page, m[1], m[2]] as const),
  );

  it('has the guide’s and the recipe pages, with checked examples', () => {
    expect(pages).toEqual(expect.arrayContaining(['getting-started.md', 'cron-singletons.md', 'tasks.md', 'kubernetes.md', 'production.md']));
    expect(blocks.length).toBeGreaterThanOrEqual(20);
  });

  it.each(blocks)('%s shows %s whole', (_page, file, code) => {
    expect(existsSync(join(root, file))).toBe(true);
    expect(code).toBe(read(file));
  });

  it.each(pages)('%s has no unchecked ts blocks', (page) => {
    const text = read(`docs/${page}`);
    const checked = [...text.matchAll(/<!-- example: \S+ -->\s*```ts\n/g)].length;
    expect([...text.matchAll(/```ts\n/g)].length).toBe(checked);
  });

  it('imports the map configuration from where the Helm values ship it', () => {
    // --set-file puts the file into the chart's ConfigMap under this name, and the chart mounts it at /data/hazelcast.
    expect(read('docs/kubernetes.md')).toContain("--set-file 'hazelcast.configurationFiles.gatekeeper-maps\\.yaml=docs/hazelcast/gatekeeper-maps.yaml'");
    expect(read('docs/kubernetes/hazelcast-values.yaml')).toContain('- /data/hazelcast/gatekeeper-maps.yaml');
  });

  it('gives the app the cluster the members form', () => {
    const values = read('docs/kubernetes/hazelcast-values.yaml');
    const clusterName = /cluster-name: (\S+)/.exec(values)?.[1];
    expect(clusterName).toBeDefined();
    expect(read('docs/kubernetes/store-hazelcast.yaml')).toMatch(new RegExp(`\\n  GATEKEEPER_HZ_CLUSTER_NAME: ${clusterName}\\n`));
    // The compose members and the compose app agree too.
    const compose = read('docs/compose.yaml');
    expect(/HZ_CLUSTERNAME: (\S+)/.exec(compose)?.[1]).toBe(/GATEKEEPER_HZ_CLUSTER_NAME: (\S+)/.exec(compose)?.[1]);
  });

  it('gives the app and the Jobs the one store Secret, whichever store it is', () => {
    // app.yaml and the Jobs read the store from the Secret gatekeeper-store; each store-*.yaml is that Secret for one
    // backend, naming it in GATEKEEPER_BACKEND (which examples/kubernetes.module.ts and the CLI read).
    for (const manifest of ['docs/kubernetes/app.yaml', 'docs/kubernetes/cluster-init-job.yaml', 'docs/kubernetes/redis-init-job.yaml']) {
      expect(read(manifest)).toMatch(/envFrom:\n\s+- secretRef:\n\s+name: gatekeeper-store\n/);
    }
    for (const backend of ['postgres', 'redis', 'hazelcast']) {
      const secret = read(`docs/kubernetes/store-${backend}.yaml`);
      expect(secret).toMatch(/kind: Secret\nmetadata:\n {2}name: gatekeeper-store\n/);
      expect(secret).toContain(`\n  GATEKEEPER_BACKEND: ${backend}\n`);
    }
    expect(read('examples/kubernetes.module.ts')).toContain("config.get<string>('GATEKEEPER_BACKEND')");
  });

  it('leaves the pod time to release its permits before it is killed', () => {
    // terminationGracePeriodSeconds must cover the preStop pause and the module's shutdownTimeout, with room to spare.
    const app = read('docs/kubernetes/app.yaml');
    const grace = Number(/terminationGracePeriodSeconds: (\d+)/.exec(app)?.[1]);
    const preStop = Number(/command: \["sleep", "(\d+)"\]/.exec(app)?.[1]);
    const shutdownTimeout = Number(/shutdownTimeout: '(\d+)s'/.exec(read('examples/kubernetes.module.ts'))?.[1]);
    expect(grace).toBeGreaterThanOrEqual(preStop + shutdownTimeout + 10);
  });
});
