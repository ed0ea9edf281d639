package dev.writeonce.core.testing;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/** The configuration keys a settings class declares: its public static String constants. */
public final class ConfigurationKeys {

  private ConfigurationKeys() {}

  /** Every key, leaving out defaults ({@code *_DEFAULT}) and the common {@code PREFIX}. */
  public static List<String> of(Class<?> type) {
    List<String> keys = new ArrayList<>();
    for (Field field : type.getDeclaredFields()) {
      int mods = field.getModifiers();
      if (Modifier.isStatic(mods)
          && Modifier.isPublic(mods)
          && field.getType() == String.class
          && !field.getName().endsWith("_DEFAULT")
          && !field.getName().equals("PREFIX")) {
        try {
          keys.add((String) field.get(null));
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
        }
      }
    }
    return keys;
  }
}
