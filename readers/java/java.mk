# readers/java/java.mk: the Java reader, built with javac/jar and tested with JUnit 5, using the
# JDK and the jars of Debian's packages (default-jdk-headless, libjackson2-databind-java, junit5).
# Included from the top-level Makefile.
#
#   make java-reader   .build/java/pinkeeper-reader.jar (`java -jar … validate …`)
#   make test-java     the reader's JUnit tests, TLS tests and the conformance cases
#                      (JR_TEST_FLAGS: extra JVM flags, e.g. -Dpinkeeper.conformance.cases=FILE)

JR_TOP      := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../..)
JR_SRC      := $(JR_TOP)/readers/java/src
JR_OUT      := $(JR_TOP)/.build/java
JR_JAR      := $(JR_OUT)/pinkeeper-reader.jar
JR_SHARE    ?= /usr/share/java
JR_JACKSON  := $(JR_SHARE)/jackson-databind.jar $(JR_SHARE)/jackson-core.jar $(JR_SHARE)/jackson-annotations.jar
JR_JUNIT    := $(JR_SHARE)/junit-platform-console-standalone.jar
JR_JAVAC    := javac --release 17 -encoding UTF-8 -Xlint:all -Werror
jr_path      = $(subst $(eval) ,:,$(strip $(1)))

.PHONY: java-reader test-java

# The jar names Debian's Jackson jars on its Class-Path, so `java -jar` needs nothing else.
java-reader: deps
	rm -rf $(JR_OUT)/classes && mkdir -p $(JR_OUT)/classes
	$(JR_JAVAC) -cp $(call jr_path,$(JR_JACKSON)) -d $(JR_OUT)/classes $$(find $(JR_SRC)/main/java -name '*.java')
	printf 'Main-Class: pinkeeper.reader.ValidateCommand\nClass-Path: %s\n' "$(JR_JACKSON)" >$(JR_OUT)/MANIFEST.MF
	jar --create --file $(JR_JAR) --manifest $(JR_OUT)/MANIFEST.MF -C $(JR_OUT)/classes .

test-java: java-reader
	rm -rf $(JR_OUT)/test-classes && mkdir -p $(JR_OUT)/test-classes
	$(JR_JAVAC) -cp $(call jr_path,$(JR_JAR) $(JR_JACKSON) $(JR_JUNIT)) -d $(JR_OUT)/test-classes \
		$$(find $(JR_SRC)/test/java -name '*.java')
	java $(JR_TEST_FLAGS) -Dpinkeeper.jar=$(JR_JAR) -Dpinkeeper.repository=$(JR_TOP) -jar $(JR_JUNIT) --disable-banner --disable-ansi-colors \
		--fail-if-no-tests --details=tree --class-path $(call jr_path,$(JR_OUT)/test-classes $(JR_JAR) $(JR_JACKSON)) \
		--scan-class-path $(JR_OUT)/test-classes
