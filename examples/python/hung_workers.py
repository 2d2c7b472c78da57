"""Example of a hung program: two worker threads take two locks in opposite orders and
deadlock, and the main thread waits for them forever.

    python3 hung_workers.py

Prints "ready" once both workers hold their first lock and wait for the other's, then hangs
until killed. `strata stacks PID` shows each thread waiting on a lock, at the line that waits
(`--locals` adds each Python frame's simple locals).
"""
import threading

accounts_lock = threading.Lock()
ledger_lock = threading.Lock()
both_hold_one = threading.Barrier(3)


def transfer(amount):
    with accounts_lock:
        both_hold_one.wait()
        with ledger_lock:  # waits for audit(), which holds ledger_lock
            return amount


def audit(entries):
    with ledger_lock:
        both_hold_one.wait()
        with accounts_lock:  # waits for transfer(), which holds accounts_lock
            return len(entries)


def main():
    workers = [threading.Thread(target=transfer, args=(100,), name="transfer"),
               threading.Thread(target=audit, args=(["a", "b"],), name="audit")]
    for w in workers:
        w.start()
    both_hold_one.wait()
    print("ready", flush=True)
    for w in workers:
        w.join()  # never returns: the workers are deadlocked


if __name__ == "__main__":
    main()
