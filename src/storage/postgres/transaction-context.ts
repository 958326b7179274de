/**
 * slonik keeps the running transaction in an AsyncLocalStorage
 * (slonik/dist/contexts/transactionContext.js, `run` in
 * connectionMethods/transaction.js), read by executeQuery.js only to refuse a
 * query on another connection inside a transaction
 * (UnexpectedForeignConnectionError). Its first `run` enables it, and on
 * Node 20 an enabled AsyncLocalStorage turns on promise hooks for every
 * promise of the thread, for good: the main thread's first transaction is a
 * migration, so every request paid them (a chain of seven async calls: 0.3 µs
 * → 0.87 µs). The thread that serves HTTP therefore turns the context off again
 * whenever none of its transactions runs; inside one it is on, so the check
 * still works.
 */
import type { DatabasePool } from 'slonik';
// Internal to slonik (no exports map): the one AsyncLocalStorage its transactions run in.
import { transactionContext } from 'slonik/dist/contexts/transactionContext.js';

let running = 0;

/**
 * `pool` whose `transaction` turns slonik's context off when the last one of
 * this thread ends. Transactions opened another way (`connect` then
 * `transaction`) still work; they leave the context on until the next one
 * through this pool ends.
 */
export function releasingTransactionContext(pool: DatabasePool): DatabasePool {
  const transaction: DatabasePool['transaction'] = async (handler, retryLimit) => {
    running++;
    try {
      return await pool.transaction(handler, retryLimit);
    } finally {
      if (--running === 0) transactionContext.disable();
    }
  };
  return new Proxy(pool, { get: (target, key) => (key === 'transaction' ? transaction : Reflect.get(target, key)) });
}
