import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The AWS calls a function's code can make, read from its sources without running them: every
 * `new <Command>(…)` of an AWS SDK command in code its handler can reach. Reach is a rapid type
 * analysis over the files its handler imports (statically or with `import()`):
 *
 * - a file's top-level code runs when it is imported (its statements, and constants that are not
 *   functions); a top-level function, constant or class is reached when reached code names it;
 * - a class's method is reached when its class is reached and reached code uses a member of that
 *   name declared by that class, by a port the class implements (`deps.domains.get` reaches every
 *   reached DomainRepository's `get`; a class that names no port, by any port's), or by a type the
 *   reading cannot tell (a package's: packages are not read, so their values are `any`). A member
 *   only the platform declares (a Map's `delete`) reaches nothing.
 *
 * So it errs on the side of more calls, never fewer (short of code it cannot see: a command built
 * by name, or sent from a dependency). A call it derives that the function never makes is either
 * granted anyway or named, with why, by the grants test's allow-list. It reads 58 functions in
 * about 6 s of CPU (one TypeScript program over the project's sources, types checked on demand).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** IAM's service of each SDK package a function imports commands from. */
const SERVICES: Record<string, string> = {
  '@aws-sdk/client-dynamodb': 'DynamoDB',
  '@aws-sdk/lib-dynamodb': 'DynamoDB',
  '@aws-sdk/client-sqs': 'SQS',
  '@aws-sdk/client-sesv2': 'SESv2',
  '@aws-sdk/client-s3': 'S3',
};

/** The DocumentClient's commands, by the DynamoDB operation each sends. */
const DOCUMENT_COMMANDS: Record<string, string> = {
  GetCommand: 'GetItem',
  PutCommand: 'PutItem',
  UpdateCommand: 'UpdateItem',
  DeleteCommand: 'DeleteItem',
  QueryCommand: 'Query',
  ScanCommand: 'Scan',
  BatchGetCommand: 'BatchGetItem',
  BatchWriteCommand: 'BatchWriteItem',
  TransactGetCommand: 'TransactGetItems',
  TransactWriteCommand: 'TransactWriteItems',
};

interface Unit {
  file: string;
  name: string;
  /** The class a method belongs to (undefined: a top-level declaration). */
  className?: string;
  /** What the unit's code is (a class: its heritage, fields and constructor). */
  parts: ts.Node[];
  /** A class: the ports (interfaces, object types) it says it implements. */
  implements?: Set<string>;
}

/** Any owner: a property whose declaration is not known (a value of type `any`, a destructuring). */
const ANY = '*';

interface ParsedFile {
  imports: string[];
  /** Top-level declarations by name, and each class's methods. */
  declarations: Map<string, Unit>;
  methods: Map<string, Unit[]>;
  /** Code that runs when the file is imported. */
  roots: ts.Node[];
  /** SDK command classes this file imports: local name → `Service:Operation`. */
  commands: Map<string, string>;
  /** `import { a as b }`: b names a. */
  aliases: Map<string, string>;
}

const parsed = new Map<string, ParsedFile>();

/**
 * The project's sources as one program, for the one question types answer here: whether `x.get`
 * is a method of the project (a port, a class) or of the platform (a Map's, an array's). Packages
 * are not read (their types are `any`, and a property of `any` counts as the project's), so it is
 * built in a moment.
 */
let program: ts.Program | undefined;
function programOf(entries: string[]): { program: ts.Program; checker: ts.TypeChecker } {
  if (!program) {
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      noEmit: true,
      types: [],
      lib: ['lib.es2023.d.ts'],
      skipLibCheck: true,
    };
    const host = ts.createCompilerHost(options);
    host.resolveModuleNameLiterals = (literals, containing) =>
      literals.map((literal) => {
        const resolvedFileName = resolveImport(containing, literal.text);
        return {
          resolvedModule: resolvedFileName ? { resolvedFileName, extension: ts.Extension.Ts } : undefined,
        };
      });
    program = ts.createProgram(entries, options, host);
  }
  return { program, checker: program.getTypeChecker() };
}

const inProject = (declaration: ts.Declaration) => {
  const file = declaration.getSourceFile().fileName;
  return file.startsWith(ROOT) && !file.includes('/node_modules/');
};

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier).replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  return undefined;
}

const isFunctionLike = (node: ts.Node | undefined) =>
  node !== undefined && (ts.isArrowFunction(node) || ts.isFunctionExpression(node));

function parse(file: string): ParsedFile {
  const done = parsed.get(file);
  if (done) return done;
  const source = program?.getSourceFile(file);
  if (!source) throw new Error(`${file} is not in the program`);
  const result: ParsedFile = {
    imports: [],
    declarations: new Map(),
    methods: new Map(),
    roots: [],
    commands: new Map(),
    aliases: new Map(),
  };
  const visitImports = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const specifier = node.moduleSpecifier.text;
      const service = SERVICES[specifier];
      const bindings = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : undefined;
      if (bindings && ts.isNamedImports(bindings))
        for (const element of bindings.elements) {
          const imported = (element.propertyName ?? element.name).text;
          if (element.propertyName) result.aliases.set(element.name.text, imported);
          if (service && imported.endsWith('Command') && !element.isTypeOnly)
            result.commands.set(
              element.name.text,
              `${service}:${(specifier === '@aws-sdk/lib-dynamodb' && DOCUMENT_COMMANDS[imported]) || imported.replace(/Command$/, '')}`,
            );
        }
      const target = resolveImport(file, specifier);
      if (target) result.imports.push(target);
    }
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      const target = resolveImport(file, node.arguments[0].text);
      if (target) result.imports.push(target);
    }
    ts.forEachChild(node, visitImports);
  };
  visitImports(source);
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name)
      result.declarations.set(statement.name.text, { file, name: statement.name.text, parts: [statement] });
    else if (ts.isClassDeclaration(statement) && statement.name) {
      const className = statement.name.text;
      // The class itself: what runs when it is built (heritage, fields, constructor).
      const built = statement.members.filter(
        (m) =>
          ts.isConstructorDeclaration(m) || (ts.isPropertyDeclaration(m) && !isFunctionLike(m.initializer)),
      );
      const ports = (statement.heritageClauses ?? [])
        .filter((clause) => clause.token === ts.SyntaxKind.ImplementsKeyword)
        .flatMap((clause) => clause.types.map((type) => type.expression.getText(source)));
      result.declarations.set(className, {
        file,
        name: className,
        parts: [...(statement.heritageClauses ?? []), ...built],
        implements: new Set(ports),
      });
      for (const member of statement.members) {
        if (built.includes(member) || !member.name) continue;
        // A computed name ([Symbol.asyncIterator]) is reached with its class.
        const name = ts.isComputedPropertyName(member.name) ? '' : member.name.getText(source);
        const list = result.methods.get(name) ?? [];
        list.push({ file, name, className, parts: [member] });
        result.methods.set(name, list);
      }
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (!ts.isIdentifier(declaration.name)) {
          result.roots.push(declaration);
          continue;
        }
        result.declarations.set(declaration.name.text, {
          file,
          name: declaration.name.text,
          parts: [declaration],
        });
        if (!isFunctionLike(declaration.initializer)) result.roots.push(declaration);
      }
    } else if (
      !ts.isImportDeclaration(statement) &&
      !ts.isInterfaceDeclaration(statement) &&
      !ts.isTypeAliasDeclaration(statement) &&
      !ts.isExportDeclaration(statement)
    )
      result.roots.push(statement);
  }
  parsed.set(file, result);
  return result;
}

/** What reached code names: identifiers, members (by name, with the types that declare them), SDK commands built. */
interface Found {
  names: Set<string>;
  /** A member's name → the classes or ports that declare it (ANY: not known). */
  members: Map<string, Set<string>>;
  calls: Set<string>;
}

/**
 * Who declares the member `name` names: a class or port of the project (by its name), ANY when
 * the type does not say (`any`, a declaration merged from several), none when only the platform
 * does (a Map's delete, an array's find: no class of the project is reached).
 */
function ownersOf(name: ts.Node, checker: ts.TypeChecker): string[] {
  const declarations = checker.getSymbolAtLocation(name)?.declarations ?? [];
  if (declarations.length === 0) return [ANY];
  const owners: string[] = [];
  for (const declaration of declarations) {
    if (!inProject(declaration)) continue;
    let owner: ts.Node = declaration.parent;
    if (ts.isTypeLiteralNode(owner) && ts.isTypeAliasDeclaration(owner.parent)) owner = owner.parent;
    owners.push(
      (ts.isClassDeclaration(owner) ||
        ts.isInterfaceDeclaration(owner) ||
        ts.isTypeAliasDeclaration(owner)) &&
        owner.name
        ? owner.name.text
        : ANY,
    );
  }
  return owners;
}

/** Each piece of code's references, read once (the functions share most of their code). */
const referencesRead = new Map<ts.Node, Found>();

function referencesOf(node: ts.Node, file: ParsedFile, checker: ts.TypeChecker, into: Found) {
  let read = referencesRead.get(node);
  if (!read) {
    read = { names: new Set(), members: new Map(), calls: new Set() };
    readReferences(node, file, checker, read);
    referencesRead.set(node, read);
  }
  for (const name of read.names) into.names.add(name);
  for (const call of read.calls) into.calls.add(call);
  for (const [name, owners] of read.members) {
    const known = into.members.get(name) ?? new Set<string>();
    for (const owner of owners) known.add(owner);
    into.members.set(name, known);
  }
}

function readReferences(node: ts.Node, file: ParsedFile, checker: ts.TypeChecker, into: Found) {
  const member = (name: string, owners: string[]) => {
    const known = into.members.get(name) ?? new Set<string>();
    for (const owner of owners) known.add(owner);
    into.members.set(name, known);
  };
  const visit = (n: ts.Node) => {
    if (ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n) || ts.isTypeNode(n)) return;
    if (ts.isNewExpression(n) && ts.isIdentifier(n.expression)) {
      const call = file.commands.get(n.expression.text);
      if (call) into.calls.add(call);
    }
    if (ts.isPropertyAccessExpression(n)) member(n.name.text, ownersOf(n.name, checker));
    if (ts.isElementAccessExpression(n) && ts.isStringLiteral(n.argumentExpression))
      member(n.argumentExpression.text, [ANY]);
    if (ts.isBindingElement(n)) {
      const key = n.propertyName ?? n.name;
      if (ts.isIdentifier(key)) member(key.text, [ANY]);
    }
    // A name in a value's place (not a property's: `x.find` names no function `find`).
    const parent = n.parent;
    const propertyName =
      parent &&
      ((ts.isPropertyAccessExpression(parent) && parent.name === n) ||
        ((ts.isPropertyAssignment(parent) ||
          ts.isMethodDeclaration(parent) ||
          ts.isPropertyDeclaration(parent)) &&
          parent.name === n) ||
        (ts.isBindingElement(parent) && parent.propertyName === n));
    if (ts.isIdentifier(n) && !propertyName) {
      into.names.add(n.text);
      const aliased = file.aliases.get(n.text);
      if (aliased) into.names.add(aliased);
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
}

/** Whether reached code calls this method of a reached class: by its class, a port it implements, or a type that does not say. */
function called(method: string, unit: Unit, owner: Unit, found: Found, ports: Set<string>): boolean {
  if (method === '') return true;
  const owners = found.members.get(method);
  if (!owners) return false;
  for (const name of owners) {
    if (name === ANY || name === unit.className || owner.implements?.has(name)) return true;
    // A port the class does not name may still be one it fills (structural typing).
    if (ports.has(name) && !owner.implements?.size) return true;
  }
  return false;
}

/**
 * Every `Service:Operation` the function `name` (functions/handlers/<name>.ts) can call, each
 * with the code that makes it (`adapters/…/file.ts#Class.method`, or `…#function`, under functions/).
 */
export function derivedCalls(name: string): Map<string, string[]> {
  const entry = join(ROOT, 'functions', 'handlers', `${name}.ts`);
  const handlers = join(ROOT, 'functions', 'handlers');
  const { checker } = programOf(readdirSync(handlers).map((file) => join(handlers, file)));
  const files: string[] = [];
  const seen = new Set<string>();
  const walk = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    files.push(file);
    for (const next of parse(file).imports) walk(next);
  };
  walk(entry);
  // The classes of these files: what is not one is a port (an interface or object type).
  const classNames = new Set(
    files.flatMap((file) =>
      [...parse(file).declarations.values()].filter((u) => u.implements).map((u) => u.name),
    ),
  );
  const found: Found = { names: new Set(), members: new Map(), calls: new Set() };
  const reached = new Set<Unit | ts.Node>();
  const calls = new Map<string, string[]>();
  const reach = (unit: Unit | ts.Node, file: ParsedFile) => {
    if (reached.has(unit)) return false;
    reached.add(unit);
    for (const part of 'parts' in unit ? unit.parts : [unit]) {
      const own: Found = { names: new Set(), members: new Map(), calls: new Set() };
      referencesOf(part, file, checker, own);
      referencesOf(part, file, checker, found);
      const where = `${relative(join(ROOT, 'functions'), part.getSourceFile().fileName)}#${'parts' in unit ? [unit.className, unit.name].filter(Boolean).join('.') : 'top level'}`;
      for (const call of own.calls) calls.set(call, [...(calls.get(call) ?? []), where]);
    }
    return true;
  };
  for (const file of files) for (const root of parse(file).roots) reach(root, parse(file));
  // The declarations and methods of these files, by name.
  const declared = new Map<string, [Unit, ParsedFile][]>();
  const methods: [string, Unit, ParsedFile][] = [];
  for (const file of files) {
    const info = parse(file);
    for (const [name, unit] of info.declarations)
      declared.set(name, [...(declared.get(name) ?? []), [unit, info]]);
    for (const [method, units] of info.methods) for (const unit of units) methods.push([method, unit, info]);
  }
  const classes = new Map<string, Unit>();
  for (let changed = true; changed; ) {
    changed = false;
    const ports = new Set(
      [...found.members.values()].flatMap((owners) => [...owners]).filter((o) => !classNames.has(o)),
    );
    for (const name of [...found.names])
      for (const [unit, info] of declared.get(name) ?? [])
        if (reach(unit, info)) {
          changed = true;
          if (unit.implements) classes.set(`${unit.file}#${unit.name}`, unit);
        }
    for (const [method, unit, info] of methods) {
      if (reached.has(unit)) continue;
      const owner = classes.get(`${unit.file}#${unit.className}`);
      if (owner && called(method, unit, owner, found, ports) && reach(unit, info)) changed = true;
    }
  }
  return calls;
}
