package dev.writeonce.shim;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A part of {@link KnownKeys} whose state is read and changed only while the monitor of the {@code
 * KnownKeys} that holds it is held: the part has no lock of its own, and only {@code KnownKeys}'
 * synchronized methods call it.
 */
@Documented
@Retention(RetentionPolicy.SOURCE)
@Target({ElementType.TYPE, ElementType.FIELD})
@interface GuardedByCache {}
