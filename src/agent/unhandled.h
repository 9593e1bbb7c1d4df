/*
 * unhandled: an exception that no managed code catches, seen from the
 * runtime's exception callbacks, so that the recording keeps the program's
 * last moments and says what ended it.
 *
 * The runtime aborts the process for an unhandled exception (SIGABRT,
 * after restoring every signal's default action: no signal handler of
 * ours runs then, see signal/fatal_signal.h) and never calls Shutdown.  Its
 * callbacks tell it earlier: an exception is thrown (ExceptionThrown),
 * pass 1 searches for a catch clause (ExceptionSearchCatcherFound when it
 * finds one), pass 2 unwinds.  Pass 2 starting with no catcher found means
 * no managed code catches it; the runtime then prints "Unhandled
 * exception" and aborts; it takes that path too when it catches an
 * exception itself where it called managed code (a static constructor's
 * becomes a TypeInitializationException), but then goes straight to pass 2,
 * while it spends long between the passes printing an unhandled one: a gap
 * of more than 1 ms tells them apart (as the exceptions source does).  On
 * that thread, in that callback, the agent asks
 * the loop to record everything taken so far, write ended_by ("an
 * unhandled System.InvalidOperationException") and flush, and waits for it
 * (at most FATAL_SIGNAL_WAIT_NS).  The recording stays open: where the runtime
 * itself catches the exception after all (a static constructor's becomes
 * a TypeInitializationException) the program goes on, and so does the
 * recording, whose close then clears ended_by.
 *
 * The callbacks cost a store each; the runtime calls them only with
 * COR_PRF_MONITOR_EXCEPTIONS, about 1 µs per exception thrown
 * (docs/performance.md).  On .NET 10 the runtime's own last call for an
 * unhandled exception is rewritten to call unhandled_hit instead
 * (unhandled_probe.h): no gap to judge, no callback needed; while it is in
 * place the callbacks (when a source takes them) only count throws.
 */
#ifndef CORSCOPE_UNHANDLED_H
#define CORSCOPE_UNHANDLED_H

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* The probe (unhandled_probe.h) is in place (1) or gone (0): while it is,
 * the callbacks only count throws. */
HIDDEN void unhandled_probed(int on);
/* The rewritten AppContext.OnUnhandledException (the dying thread, in
 * native code after a GC transition): home is where its frame keeps the
 * exception.  Returns 0 (for calli signatures that return an int). */
HIDDEN int32_t unhandled_hit(uintptr_t home);

/* Every exception callback (the throwing thread): step is enum
 * source_exception_step (source.h), object the thrown one for
 * SOURCE_EX_THROWN. */
HIDDEN void unhandled_step(ICorProfilerInfo15 *info, int step, ObjectID object);

/* Exceptions thrown since the library was loaded (ExceptionThrown
 * callbacks, rethrows included): a recording counts its own as the
 * difference between its start and its end. */
HIDDEN uint64_t unhandled_thrown(void);

/* The loop: arms the wait (a callback waits only while the loop runs). */
HIDDEN void unhandled_arm(void);
HIDDEN void unhandled_disarm(void);
/* The loop: an unhandled exception waits to be recorded?  Then *klass is
 * its class (alive while its thread waits), *by_probe says who told
 * (unhandled_hit, or the callbacks).  Returns 1 once per request. */
HIDDEN int unhandled_pending(ClassID *klass, int *by_probe);
/* The loop: what was asked is in the file; the thread may go on. */
HIDDEN void unhandled_recorded(void);
/* Was an unhandled exception recorded (ended_by written)? */
HIDDEN int unhandled_seen(void);

#endif
