/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.TestConfigurationFieldsBase;
import org.junit.jupiter.api.Test;

/**
 * The test every feature's {@code *ConfigKeys} class has: the class and the {@code *-default.xml}
 * shipped in the feature's jar (the reference users and {@code dev-support/test/docs-keys.py}
 * read; deliberately not a default resource) say the same. A subclass names the XML, the class
 * and the aliases that have no default of their own, and adds its reader's tests.
 *
 * <p>Built on Hadoop's own {@link TestConfigurationFieldsBase} (hadoop-common's tests jar), which
 * compares key names both ways: every key-shaped {@code public static final String} of the class
 * is in the XML and every XML key is such a constant. Both directions fail here (Hadoop leaves
 * that to each subclass). What Hadoop's base only logs, this class asserts:
 * <ul>
 *   <li>every key constant is named {@code FOO_KEY} and has a {@code FOO_DEFAULT} whose value is
 *       the XML's value ({@code ""} for an empty one), unless the subclass lists the key as an
 *       alias without a default (a HiBD spelling: unset means "ask our key"), whose XML value
 *       is then empty; every {@code FOO_DEFAULT} belongs to a {@code FOO_KEY};</li>
 *   <li>every {@code FOO_DEPRECATED_KEY} (an earlier name, not in the XML, as Hadoop's own
 *       deprecated keys are not in {@code core-default.xml}) is registered by the class's
 *       static {@code addDeprecations()}, idempotently, so that a value set under it is read
 *       under {@code FOO_KEY}.</li>
 * </ul>
 * Test instances are per method (JUnit's default); nothing here is shared between threads.
 */
public abstract class ConfigKeysTestBase extends TestConfigurationFieldsBase {
  private static final String KEY = "_KEY";
  private static final String DEFAULT = "_DEFAULT";
  private static final String DEPRECATED_KEY = "_DEPRECATED_KEY";

  private final String xml;
  private final Class<?> keys;
  private final Set<String> withoutDefault;

  /**
   * @param xml                   the feature's {@code *-default.xml}, a classpath resource
   * @param keys                  the feature's {@code *ConfigKeys} class
   * @param aliasesWithoutDefault keys that have no {@code _DEFAULT} on purpose
   */
  protected ConfigKeysTestBase(String xml, Class<?> keys, String... aliasesWithoutDefault) {
    this.xml = xml;
    this.keys = keys;
    this.withoutDefault = new TreeSet<>(List.of(aliasesWithoutDefault));
  }

  @Override
  public void initializeMemberVariables() {
    xmlFilename = xml;
    configurationClasses = new Class<?>[] {keys};
    errorIfMissingConfigProps = true;
    errorIfMissingXmlProps = true;
    configurationPropsToSkipCompare.addAll(deprecatedNames().keySet());
  }

  @Test
  public void testDefaultsInClassEqualTheXml() throws IllegalAccessException {
    Configuration inXml = new Configuration(false);
    inXml.addResource(xml);
    Map<String, Field> fields = constants();
    List<String> problems = new ArrayList<>();
    Set<String> keyValues = new TreeSet<>();
    for (Field f : fields.values()) {
      String name = f.getName();
      if (!name.endsWith(KEY) || name.endsWith(DEPRECATED_KEY)) {
        continue;
      }
      String key = (String) f.get(null);
      keyValues.add(key);
      String base = name.substring(0, name.length() - KEY.length());
      Field dflt = fields.get(base + DEFAULT);
      String xmlValue = inXml.getRaw(key) == null ? "" : inXml.getRaw(key).trim();
      if (withoutDefault.contains(key)) {
        if (dflt != null) {
          problems.add(key + " is listed as an alias without a default but has " + dflt.getName());
        }
        if (!xmlValue.isEmpty()) {
          problems.add(key + " is an alias without a default but " + xml + " gives it '"
              + xmlValue + "'");
        }
      } else if (dflt == null) {
        problems.add(name + " (" + key + ") has no " + base + DEFAULT + " (or list it as an"
            + " alias without a default)");
      } else if (!String.valueOf(dflt.get(null)).equals(xmlValue)) {
        problems.add(base + DEFAULT + " is '" + dflt.get(null) + "' but " + xml + " has " + key
            + "='" + xmlValue + "'");
      }
    }
    for (Field f : fields.values()) {
      String name = f.getName();
      if (name.endsWith(DEFAULT)
          && !fields.containsKey(name.substring(0, name.length() - DEFAULT.length()) + KEY)) {
        problems.add(name + " has no " + name.substring(0, name.length() - DEFAULT.length())
            + KEY);
      }
    }
    Configuration names = new Configuration(false);
    names.setAllowNullValueProperties(true); // keeps the keys whose value is empty
    names.addResource(xml);
    for (Map.Entry<String, String> e : names) {
      if (!keyValues.contains(e.getKey())) {
        problems.add(e.getKey() + " in " + xml + " is no FOO" + KEY + " constant of "
            + keys.getSimpleName());
      }
    }
    for (String alias : withoutDefault) {
      if (!keyValues.contains(alias)) {
        problems.add(alias + " is listed as an alias without a default but is no key of "
            + keys.getSimpleName());
      }
    }
    assertTrue(problems.isEmpty(), keys.getSimpleName() + " vs " + xml + ": "
        + String.join("; ", problems));
  }

  @Test
  public void testDeprecatedNamesLeadToTheirKeys() throws ReflectiveOperationException {
    Map<String, String> deprecated = deprecatedNames();
    if (deprecated.isEmpty()) {
      return;
    }
    Method register = keys.getMethod("addDeprecations");
    register.invoke(null);
    register.invoke(null); // idempotent: readers of several features may each call it
    for (Map.Entry<String, String> e : deprecated.entrySet()) {
      assertTrue(Configuration.isDeprecated(e.getKey()), e.getKey() + " is not registered");
      Configuration c = new Configuration(false);
      c.set(e.getKey(), "set-under-the-old-name");
      assertEquals("set-under-the-old-name", c.get(e.getValue()),
          e.getKey() + " does not lead to " + e.getValue());
    }
  }

  /** Old name to new name of every {@code FOO_DEPRECATED_KEY} (with its {@code FOO_KEY}). */
  private Map<String, String> deprecatedNames() {
    Map<String, Field> fields = constants();
    Map<String, String> out = new LinkedHashMap<>();
    try {
      for (Field f : fields.values()) {
        String name = f.getName();
        if (name.endsWith(DEPRECATED_KEY)) {
          Field now = fields.get(name.substring(0, name.length() - DEPRECATED_KEY.length()) + KEY);
          assertTrue(now != null, name + " has no key it was renamed to");
          out.put((String) f.get(null), (String) now.get(null));
        }
      }
    } catch (IllegalAccessException e) {
      throw new AssertionError(e);
    }
    return out;
  }

  /** The public static final fields of the keys class, by name. */
  private Map<String, Field> constants() {
    Map<String, Field> out = new LinkedHashMap<>();
    for (Field f : keys.getDeclaredFields()) {
      int m = f.getModifiers();
      if (Modifier.isPublic(m) && Modifier.isStatic(m) && Modifier.isFinal(m)) {
        out.put(f.getName(), f);
      }
    }
    return out;
  }
}
