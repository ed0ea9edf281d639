package dev.writeonce.teststore;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterClassTemplateInvocationCallback;
import org.junit.jupiter.api.extension.BeforeClassTemplateInvocationCallback;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContext;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContextProvider;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/** One run of an {@link EachStore} suite per selected store, with that store to inject. */
final class StoreInvocations implements ClassTemplateInvocationContextProvider {

  @Override
  public boolean supportsClassTemplate(ExtensionContext context) {
    return true;
  }

  @Override
  public Stream<ClassTemplateInvocationContext> provideClassTemplateInvocationContexts(
      ExtensionContext context) {
    return TestStores.selected().stream().map(OnStore::new);
  }

  /** A run on one store: the store starts when the suite's first instance asks for it. */
  private record OnStore(String storeName) implements ClassTemplateInvocationContext {

    @Override
    public String getDisplayName(int invocationIndex) {
      return "[" + storeName + "]";
    }

    @Override
    public List<Extension> getAdditionalExtensions() {
      return List.of(new StoreParameter(storeName), new PerStoreState(storeName));
    }
  }

  /** Starts and stops a {@link StoreLifecycle} suite's state around its run on one store. */
  private record PerStoreState(String storeName)
      implements BeforeClassTemplateInvocationCallback, AfterClassTemplateInvocationCallback {

    @Override
    public void beforeClassTemplateInvocation(ExtensionContext context) throws Exception {
      if (context.getTestInstance().orElse(null) instanceof StoreLifecycle suite) {
        suite.startOn(TestStores.get(storeName));
      }
    }

    @Override
    public void afterClassTemplateInvocation(ExtensionContext context) throws Exception {
      if (context.getTestInstance().orElse(null) instanceof StoreLifecycle suite) {
        suite.stopOn(TestStores.get(storeName));
      }
    }
  }

  private record StoreParameter(String storeName) implements ParameterResolver {

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
      return parameter.getParameter().getType() == TestStore.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
      return TestStores.get(storeName);
    }
  }
}
