package dev.writeonce.spark;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * Copies of Spark's catalog case classes with one field changed, through their own {@code copy} and
 * {@code copy$default$N} methods: the number of fields differs between Spark lines (4.2 added one
 * to the storage format), so a call compiled against one line would not link on the other.
 */
final class CaseClasses {

  private CaseClasses() {}

  @SuppressWarnings("unchecked")
  static <T> T copyWith(T instance, int field, Object value) {
    Method copy = null;
    for (Method method : instance.getClass().getMethods()) {
      if (method.getName().equals("copy") && !Modifier.isStatic(method.getModifiers())) {
        copy = method;
      }
    }
    if (copy == null) {
      throw new IllegalStateException(instance.getClass().getName() + " has no copy method");
    }
    try {
      Object[] args = new Object[copy.getParameterCount()];
      for (int i = 0; i < args.length; i++) {
        args[i] =
            i == field
                ? value
                : instance.getClass().getMethod("copy$default$" + (i + 1)).invoke(instance);
      }
      return (T) copy.invoke(instance, args);
    } catch (NoSuchMethodException | IllegalAccessException e) {
      throw new IllegalStateException("copying " + instance.getClass().getName(), e);
    } catch (InvocationTargetException e) {
      throw new IllegalStateException(
          "copying " + instance.getClass().getName() + ": " + e.getCause(), e.getCause());
    }
  }
}
