"""The Java target: readers of a schema's -hot types into plain Java objects (a class per type,
nested in its root's class), walking the same IR as the other targets and resolving expressions
with the same translator, in Java's spelling (syntax.py). They read with the small Java runtime
in runtime/java and feed the JVM reader for Spark."""
