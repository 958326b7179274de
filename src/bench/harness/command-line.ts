/**
 * The command line of a bench tool (compare, compare-reads, compare-load): named options are taken out of the
 * arguments as they are read, what is left is positional. A bad value or count prints the tool's usage and exits
 * with 2, so every tool refuses alike.
 */
export class CommandLine {
  readonly #args: string[];

  constructor(
    args: string[],
    readonly usage: string,
  ) {
    this.#args = [...args];
  }

  /** `--name <text>`; the fallback when absent. */
  text(name: string, fallback: string): string {
    const at = this.#args.indexOf(name);
    return at >= 0 ? (this.#args.splice(at, 2)[1] ?? '') : fallback;
  }

  /** Every `--name <text>` given, in order. */
  all(name: string): string[] {
    const out: string[] = [];
    for (let at = this.#args.indexOf(name); at >= 0; at = this.#args.indexOf(name)) out.push(this.#args.splice(at, 2)[1] ?? '');
    return out;
  }

  /** `--name <a positive whole number>`. */
  whole(name: string, fallback: number): number {
    const value = Number(this.text(name, String(fallback)));
    return Number.isSafeInteger(value) && value >= 1 ? value : this.fail(`${name}: a positive whole number`);
  }

  /** `--name <a number above 0>`. */
  positive(name: string, fallback: number): number {
    const value = Number(this.text(name, String(fallback)));
    return value > 0 ? value : this.fail(`${name}: a number above 0`);
  }

  /** `--name <one of the choices>`; the first is the default. */
  choice<T extends string>(name: string, choices: readonly [T, ...T[]]): T {
    const value = this.text(name, choices[0]);
    return (choices as readonly string[]).includes(value) ? (value as T) : this.fail(`${name}: one of ${choices.join(', ')}`);
  }

  /** What is left once the options are read: exactly `count` arguments. */
  positional(count: number): string[] {
    return this.#args.length === count ? [...this.#args] : this.fail();
  }

  fail(why?: string): never {
    process.stderr.write(`${why ? `${why}\n` : ''}${this.usage}\n`);
    process.exit(2);
  }
}
