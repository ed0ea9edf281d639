package dev.writeonce.core.testing.simulation;

/**
 * How one connection's requests fail, the same in every world: a crash of the process at the Nth
 * request (0: never), and what becomes of that request; rates of transient failures (the request is
 * not sent), of lost answers (it takes effect, its answer is lost) and of short pages in a listing;
 * a pause of the whole process before the Nth request (0: never) for some time of the schedule's
 * clock, as a long GC or a frozen container would; and a clock that moves on by up to {@code
 * tickMillis} before each request.
 */
public record Faults(
    int crashAt,
    AtCrash atCrash,
    double transientRate,
    double lostAnswerRate,
    double shortPageRate,
    int pauseAt,
    long pauseMillis,
    int tickMillis) {

  /** What becomes of the request a process crashes at. */
  public enum AtCrash {
    /** It never reaches the store. */
    UNSENT,
    /** It takes effect, and the process is dead before the answer. */
    APPLIED,
    /** It was on the wire and reaches the store later, when the world lets it land. */
    LANDS_LATE
  }

  public static final Faults NONE = new Faults(0, AtCrash.UNSENT, 0, 0, 0, 0, 0, 0);

  /** Transient failures and lost answers at the rates given, nothing else. */
  public static Faults rates(double transientRate, double lostAnswerRate) {
    return NONE.withRates(transientRate, lostAnswerRate);
  }

  public Faults withRates(double transients, double lostAnswers) {
    return new Faults(
        crashAt, atCrash, transients, lostAnswers, shortPageRate, pauseAt, pauseMillis, tickMillis);
  }

  public Faults withCrash(int at, AtCrash what) {
    return new Faults(
        at, what, transientRate, lostAnswerRate, shortPageRate, pauseAt, pauseMillis, tickMillis);
  }

  public Faults withShortPages(double rate) {
    return new Faults(
        crashAt, atCrash, transientRate, lostAnswerRate, rate, pauseAt, pauseMillis, tickMillis);
  }

  public Faults withPause(int at, long millis) {
    return new Faults(
        crashAt, atCrash, transientRate, lostAnswerRate, shortPageRate, at, millis, tickMillis);
  }

  public Faults withTicks(int millis) {
    return new Faults(
        crashAt,
        atCrash,
        transientRate,
        lostAnswerRate,
        shortPageRate,
        pauseAt,
        pauseMillis,
        millis);
  }
}
