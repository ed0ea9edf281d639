package dev.writeonce.teststore;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.ClassTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs the annotated suite once per store that {@code -Dit.stores} selects, each run named after
 * its store. The suite takes the store as a {@link TestStore} constructor parameter; the store
 * configures itself, so a suite holds no per-store code.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ClassTemplate
@ExtendWith(StoreInvocations.class)
public @interface EachStore {}
